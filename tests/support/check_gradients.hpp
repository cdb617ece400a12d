#pragma once
// The tape's gradients against central finite differences (ad::FiniteDifference, which shares no code
// with the tape's pullbacks), for a layer's trainable parameters and its input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "remat/ad/finite_difference.hpp"
#include "remat/ad/tape.hpp"
#include "remat/ops/elementwise.hpp"
#include "remat/ops/reduce.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/support/constant.hpp"

namespace remat::test {

// Compares the gradients of sum(call(layer, input) ⊙ R), R fixed and random, with respect to every
// parameter that is not frozen and the input: each element's difference relative to 1e-2 + |FD|.
template <class Layer, class Call>
void check_gradients(Layer& layer, Tensor input, Call call, double tolerance = 3e-3) {
    std::vector<Tensor*> wrt;
    for (Param* p : tree::parameters(layer))
        if (!p->frozen) wrt.push_back(&p->value);
    wrt.push_back(&input);
    Tensor weights;
    auto loss = [&] {
        Var y = call(layer, ad::leaf(input));
        if (weights.shape() != y.shape()) {
            weights = empty(y.shape());
            Generator(4242).fill_normal(weights.data(), weights.size());
        }
        return ops::sum(y * constant(weights));
    };
    const auto exact = ad::gradient(loss, wrt);
    ad::FiniteDifference fd(1e-2f);
    ad::UseBackend use(fd);
    const auto approx = ad::gradient(loss, wrt);
    for (std::size_t i = 0; i < wrt.size(); ++i) {
        CAPTURE(i);
        double worst = 0;
        for (std::size_t j = 0; j < wrt[i]->size(); ++j) {
            const double a = exact.grads[i].data()[j], b = approx.grads[i].data()[j];
            worst = std::max(worst, std::abs(a - b) / (1e-2 + std::abs(b)));
        }
        CAPTURE(worst);
        CHECK(worst < tolerance);
    }
}

}  // namespace remat::test
