// Every op's pullback against central finite differences (the FiniteDifference backend, which
// shares no code with the pullbacks), and the gradients at kinks finite differences cannot check
// (ties, clamp's bounds, NaN) against torch's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

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

namespace {
Tensor values(std::initializer_list<float> v, Shape shape) {
    Tensor t = empty(shape);
    std::copy(v.begin(), v.end(), t.begin());
    return t;
}

// The gradients of sum(f(inputs)) on the tape.
std::vector<Tensor> grads_of_sum(std::vector<Tensor> inputs, const std::function<Var(const std::vector<Var>&)>& f) {
    std::vector<Tensor*> wrt;
    for (auto& t : inputs) wrt.push_back(&t);
    return ad::gradient(
               [&] {
                   std::vector<Var> vars;
                   for (auto& t : inputs) vars.push_back(ad::leaf(t));
                   return ops::sum(f(vars));
               },
               wrt)
        .grads;
}

// Equal values, NaN where expected has NaN.
bool same_values(const Tensor& got, const Tensor& expected) {
    if (got.shape() != expected.shape()) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const float g = got.data()[i], e = expected.data()[i];
        if (std::isnan(e) ? !std::isnan(g) : g != e) return false;
    }
    return true;
}
}  // namespace

// The values below are torch 1.13's gradients for the same inputs (float64, sum(y).backward()).
TEST_CASE("gradients at ties, bounds and NaN follow torch") {
    constexpr float nan = NAN;
    SUBCASE("clamp passes the gradient on [lo, hi], both ends included, and none to NaN") {
        const Tensor x = values({-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, nan}, {7});
        auto g = grads_of_sum({x}, [](const auto& v) { return ops::clamp(v[0], -0.5f, 0.5f); });
        CHECK(same_values(g[0], values({0, 1, 1, 1, 0, 0, 0}, {7})));
        CHECK(same_values(ops::clamp(Var(x), -0.5f, 0.5f).value(), values({-0.5f, -0.5f, 0, 0.5f, 0.5f, 0.5f, nan}, {7})));
        g = grads_of_sum({x}, [](const auto& v) { return ops::clamp(v[0], 0.5f, 0.5f); });  // lo == hi
        CHECK(same_values(g[0], values({0, 0, 0, 1, 0, 0, 0}, {7})));
    }
    SUBCASE("maximum and minimum split a tie half and half; NaN sends the gradient to both") {
        const Tensor a = values({1, 2, 3, nan, 1}, {5}), b = values({1, 1, 4, 1, nan}, {5});
        CHECK(same_values(ops::maximum(Var(a), Var(b)).value(), values({1, 2, 4, nan, nan}, {5})));
        CHECK(same_values(ops::minimum(Var(a), Var(b)).value(), values({1, 1, 3, nan, nan}, {5})));
        auto g = grads_of_sum({a, b}, [](const auto& v) { return ops::maximum(v[0], v[1]); });
        CHECK(same_values(g[0], values({0.5f, 1, 0, 1, 1}, {5})));
        CHECK(same_values(g[1], values({0.5f, 0, 1, 1, 1}, {5})));
        g = grads_of_sum({a, b}, [](const auto& v) { return ops::minimum(v[0], v[1]); });
        CHECK(same_values(g[0], values({0.5f, 0, 1, 1, 1}, {5})));
        CHECK(same_values(g[1], values({0.5f, 1, 0, 1, 1}, {5})));
        // Broadcast: b's gradient is the sum of its shares, halves included.
        g = grads_of_sum({values({1, 2, 3, 1}, {2, 2}), values({1}, {1})},
                         [](const auto& v) { return ops::maximum(v[0], v[1]); });
        CHECK(same_values(g[0], values({0.5f, 1, 1, 0.5f}, {2, 2})));
        CHECK(same_values(g[1], values({1}, {1})));
    }
    SUBCASE("max over an axis sends the gradient to the first maximum, or the first NaN") {
        const Tensor x = values({1, 3, 3, 0, 2, 2, 2, 2}, {2, 4});
        auto g = grads_of_sum({x}, [](const auto& v) { return ops::max(v[0], 1); });
        CHECK(same_values(g[0], values({0, 1, 0, 0, 1, 0, 0, 0}, {2, 4})));
        // The same along axis 0 of the transpose (the reduced axis is not the last).
        g = grads_of_sum({values({1, 2, 3, 2, 3, 2, 0, 2}, {4, 2})}, [](const auto& v) { return ops::max(v[0], 0); });
        CHECK(same_values(g[0], values({0, 1, 1, 0, 0, 0, 0, 0}, {4, 2})));
        const Tensor with_nan = values({1, nan, 3, nan}, {1, 4});
        g = grads_of_sum({with_nan}, [](const auto& v) { return ops::max(v[0], -1); });
        CHECK(same_values(g[0], values({0, 1, 0, 0}, {1, 4})));
        CHECK(std::isnan(ops::max(Var(with_nan), 1).value()(0)));
    }
    SUBCASE("where sends the gradient to the chosen input, summed over broadcast axes") {
        const Var condition(values({1, 0, 1}, {1, 3}));
        const auto g = grads_of_sum({values({1, 2}, {2, 1}), values({5, 6, 7}, {3})},
                                    [&](const auto& v) { return ops::where(condition, v[0], v[1]); });
        CHECK(same_values(g[0], values({2, 2}, {2, 1})));
        CHECK(same_values(g[1], values({0, 2, 0}, {3})));
    }
}
