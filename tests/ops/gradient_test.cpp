// Every op's pullback against central finite differences (the FiniteDifference backend, which
// shares no code with the pullbacks).
#include <doctest/doctest.h>

#include <cmath>

#include "op_cases.hpp"
#include "remat/ad/finite_difference.hpp"
#include "remat/ad/tape.hpp"

using namespace remat;

TEST_CASE("every op's gradient matches finite differences") {
    for (const auto& c : test::op_cases()) {
        CAPTURE(c.name);
        auto inputs = test::case_inputs(c, 1234);
        std::vector<Tensor*> wrt;
        for (auto& t : inputs) wrt.push_back(&t);
        // A random projection of the output makes every output element matter.
        Tensor weights;
        auto loss = [&] {
            std::vector<Var> vars;
            for (auto& t : inputs) vars.push_back(ad::leaf(t));
            Var y = c.call(vars);
            if (weights.shape() != y.shape()) {
                weights = empty(y.shape());
                Generator(99).fill_normal(weights.data(), weights.size());
            }
            return ops::sum(ops::mul(y, Var(std::make_shared<const Tensor>(weights))));
        };
        const auto exact = ad::gradient(loss, wrt);
        ad::FiniteDifference fd(1e-2f);
        ad::Gradient approx;
        {
            ad::UseBackend use(fd);
            approx = ad::gradient(loss, wrt);
        }
        CHECK(exact.loss == approx.loss);
        for (std::size_t i = 0; i < wrt.size(); ++i) {
            CAPTURE(i);
            double worst = 0;
            for (std::size_t j = 0; j < wrt[i]->size(); ++j) {
                const double a = exact.grads[i].data()[j], b = approx.grads[i].data()[j];
                worst = std::max(worst, std::abs(a - b) / (1e-2 + std::abs(b)));  // relative, floored
            }
            CAPTURE(worst);
            CHECK(worst < 3e-3);  // observed ≤ 1.1e-3 (layer_norm); a 1% error in a pullback fails
        }
    }
}
