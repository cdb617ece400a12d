#include <doctest/doctest.h>

#include <cmath>
#include <xtensor/xview.hpp>

#include "remat/layers.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "remat/train/optimisers.hpp"

using namespace remat;

namespace {
// One parameter, so the optimisers' arithmetic can be followed by hand.
struct Scalar {
    BOOST_HANA_DEFINE_STRUCT(Scalar, (Param, w));
};
Scalar with_grad(float g) { return {Param{Tensor{g}}}; }
}  // namespace

TEST_CASE("optimisers follow PyTorch's update rules") {
    SUBCASE("SGD with momentum and weight decay") {
        Scalar m{Param{Tensor{1.0f}}};
        auto state = train::setup(train::SGD{.lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.5f}, m);
        auto g = with_grad(2.0f);
        train::update(state, m, g);  // v = 2 + 0.5·1 = 2.5;  w = 1 − 0.25
        CHECK(m.w.value(0) == doctest::Approx(0.75f));
        train::update(state, m, g);  // v = 0.9·2.5 + 2 + 0.375 = 4.625;  w = 0.75 − 0.4625
        CHECK(m.w.value(0) == doctest::Approx(0.2875f));
        CHECK(state.moments[0].w.value(0) == doctest::Approx(4.625f));
    }
    SUBCASE("Adam: bias-corrected moments") {
        Scalar m{Param{Tensor{1.0f}}};
        auto state = train::setup(train::Adam{.lr = 0.1f}, m);
        auto g = with_grad(0.5f);
        train::update(state, m, g);  // m̂ = 0.5, v̂ = 0.25: step = lr · 0.5 / (0.5 + 1e-8)
        CHECK(m.w.value(0) == doctest::Approx(0.9f));
        g = with_grad(-1.0f);
        train::update(state, m, g);
        const double m2 = 0.9 * 0.05 + 0.1 * -1.0, v2 = 0.999 * 0.00025 + 0.001 * 1.0;
        const double step = 0.1 * (m2 / (1 - 0.81)) / (std::sqrt(v2 / (1 - 0.999 * 0.999)) + 1e-8);
        CHECK(m.w.value(0) == doctest::Approx(0.9 - step));
        CHECK(state.step == 2);
    }
    SUBCASE("AdamW decays the weight before the Adam step") {
        Scalar m{Param{Tensor{2.0f}}};
        auto state = train::setup(train::AdamW{.lr = 0.1f, .weight_decay = 0.5f}, m);
        auto g = with_grad(3.0f);
        train::update(state, m, g);  // w = 2·(1 − 0.05) − 0.1
        CHECK(m.w.value(0) == doctest::Approx(1.8f));
    }
    SUBCASE("frozen parameters are not updated") {
        Scalar m{Param{Tensor{1.0f}, true}};
        auto state = train::setup(train::SGD{.lr = 1.0f}, m);
        Scalar g{Param{Tensor(Shape{0}), true}};
        train::update(state, m, g);
        CHECK(m.w.value(0) == 1.0f);
    }
    SUBCASE("gradient clipping by global norm") {
        auto model = nn::chain(nn::Linear::create(2, 2, *default_generator()));
        auto grads = model;
        std::get<0>(grads.layers).weight.value = Tensor{{3, 0}, {0, 0}};
        std::get<0>(grads.layers).bias->value = Tensor{0, 4};
        CHECK(train::clip_grad_norm(grads, 10.0f) == doctest::Approx(5.0f));
        CHECK(std::get<0>(grads.layers).weight.value(0, 0) == 3.0f);  // under the limit: untouched
        CHECK(train::clip_grad_norm(grads, 1.0f) == doctest::Approx(5.0f));
        CHECK(std::get<0>(grads.layers).weight.value(0, 0) == doctest::Approx(0.6f));
        CHECK(std::get<0>(grads.layers).bias->value(1) == doctest::Approx(0.8f));
    }
}

TEST_CASE("an MLP with Dropout and BatchNorm learns a synthetic task with AdamW") {
    // y = sin(x0) + x1·x2 on 256 random points; train on mini-batches of 32.
    Generator rng(2024);
    auto model = nn::chain(nn::Linear::create(3, 32, rng), nn::BatchNorm::create(32), nn::gelu_tanh,
                           nn::Dropout::create(0.1f, std::make_shared<Generator>(5)), nn::Linear::create(32, 32, rng),
                           nn::gelu_tanh, nn::Linear::create(32, 1, rng));
    Tensor x = empty(Shape{256, 3}), y = empty(Shape{256, 1});
    rng.fill_normal(x.data(), x.size());
    for (std::size_t i = 0; i < 256; ++i) y(i, 0) = std::sin(x(i, 0)) + x(i, 1) * x(i, 2);

    auto evaluate = [&] {
        ad::NoGrad no_grad;  // automatic mode: BatchNorm uses running statistics, Dropout is off
        return ops::mse(model(Var(x)), Var(y)).value()();
    };
    const float initial = evaluate();
    auto state = train::setup(train::AdamW{.lr = 3e-3f, .weight_decay = 1e-4f}, model);
    for (int epoch = 0; epoch < 60; ++epoch)
        for (std::size_t b = 0; b < 256; b += 32) {
            Tensor xb = xt::view(x, xt::range(b, b + 32)), yb = xt::view(y, xt::range(b, b + 32));
            auto [loss, grads] =
                train::withgradient([&](auto& m) { return ops::mse(m(Var(std::move(xb))), Var(std::move(yb))); }, model);
            train::clip_grad_norm(grads, 5.0f);
            train::update(state, model, grads);
        }
    const float final_loss = evaluate();
    MESSAGE("mse " << initial << " -> " << final_loss);
    CHECK(final_loss < 0.05f * initial);
    CHECK(std::get<1>(model.layers).num_batches_tracked() == 60.0f * 8);
}
