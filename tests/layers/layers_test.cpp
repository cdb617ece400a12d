#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "remat/ad/finite_difference.hpp"
#include "remat/ad/tape.hpp"
#include "remat/layers.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "tests/support/check_gradients.hpp"
#include "tests/support/constant.hpp"

using namespace remat;

namespace {
Tensor randn(const Shape& shape, std::uint64_t seed) {
    Tensor t = empty(shape);
    Generator(seed).fill_normal(t.data(), t.size());
    return t;
}
using test::check_gradients;
using test::constant;

}  // namespace

TEST_CASE("Linear") {
    nn::Linear l{Param{Tensor{{1, 2}, {3, 4}, {5, 6}}}, Param{Tensor{0.5f, 0.0f, -1.0f}}, std::nullopt};  // (out 3, in 2)
    SUBCASE("shape and hand-computed values") {
        Tensor x{{1, 1}, {0, 2}};
        Var y = l(constant(x));
        CHECK(y.shape() == Shape{2, 3});
        CHECK(y.value() == Tensor{{3.5f, 7.0f, 10.0f}, {4.5f, 8.0f, 11.0f}});
        CHECK(l.describe() == "Linear(2 => 3)");
    }
    SUBCASE("errors name the layer and both shapes") {
        CHECK_THROWS_WITH_AS(l(constant(zeros(Shape{4, 3}))), "Linear: expected input (…, 2), got (4, 3)", ShapeError);
        CHECK_THROWS_WITH_AS(l(constant(zeros(Shape{0, 2}))), "Linear: empty batch, input (0, 2)", ValueError);
    }
    SUBCASE("create: Glorot-uniform weight, zero bias, optional bias") {
        Generator rng(3);
        auto big = nn::Linear::create(300, 200, rng);
        const float a = std::sqrt(6.0f / 500.0f);
        CHECK(xt::amax(xt::abs(big.weight.value))() <= a);
        CHECK(xt::amax(xt::abs(big.weight.value))() > 0.95f * a);
        CHECK(xt::sum(xt::abs(big.bias->value))() == 0.0f);
        CHECK_FALSE(nn::Linear::create(3, 2, rng, false).bias.has_value());
    }
    SUBCASE("gradients") {
        check_gradients(l, randn({2, 3, 2}, 1), [](auto& layer, const Var& x) { return layer(x); });
    }
}

TEST_CASE("Conv1D stores its weight (in, out)") {
    nn::Conv1D c{Param{Tensor{{1, 3, 5}, {2, 4, 6}}}, Param{Tensor{0.5f, 0.0f, -1.0f}}, std::nullopt};  // (in 2, out 3)
    CHECK(c(constant(Tensor{{1, 1}})).value() == Tensor{{3.5f, 7.0f, 10.0f}});
    CHECK_THROWS_WITH_AS(c(constant(zeros(Shape{1, 3}))), "Conv1D: expected input (…, 2), got (1, 3)", ShapeError);
    check_gradients(c, randn({4, 2}, 2), [](auto& layer, const Var& x) { return layer(x); });
}

TEST_CASE("Embedding") {
    Generator rng(5);
    auto e = nn::Embedding::create(6, 3, rng);
    IdTensor ids = IdTensor::from_shape({2, 2});
    ids = {{5, 0}, {5, 2}};
    Var y = e(ids);
    CHECK(y.shape() == Shape{2, 2, 3});
    CHECK(xt::view(y.value(), 1, 0) == xt::view(e.weight.value, 5));
    ids(0, 1) = 6;
    CHECK_THROWS_WITH_AS(e(ids), doctest::Contains("id 6 at position 1 is out of range for a vocabulary of 6"), ValueError);
    CHECK_THROWS_AS(e(IdTensor::from_shape({0})), ValueError);
    ids(0, 1) = 2;
    // The input is ids, not a differentiable tensor: check the weight's gradient alone.
    check_gradients(e, zeros(Shape{1}), [&](auto& layer, const Var& unused) { return layer(ids) + unused; });
}

TEST_CASE("LayerNorm") {
    auto ln = nn::LayerNorm::create(4, 1e-5f);
    ln.weight.value = Tensor{1, 2, 1, 1};
    ln.bias.value = Tensor{0, 0, 0, 1};
    Var y = ln(constant(Tensor{{1, 2, 3, 4}}));
    const float rstd = 1.0f / std::sqrt(1.25f + 1e-5f);  // mean 2.5, biased variance 1.25
    CHECK(y.value()(0, 0) == doctest::Approx(-1.5f * rstd));
    CHECK(y.value()(0, 1) == doctest::Approx(2 * -0.5f * rstd));
    CHECK(y.value()(0, 3) == doctest::Approx(1.5f * rstd + 1));
    CHECK_THROWS_WITH_AS(ln(constant(zeros(Shape{2, 5}))), "LayerNorm: expected input (…, 4), got (2, 5)", ShapeError);
    ln.weight.value = randn({4}, 8);
    check_gradients(ln, randn({3, 4}, 9), [](auto& layer, const Var& x) { return layer(x); });
}

TEST_CASE("BatchNorm") {
    auto bn = nn::BatchNorm::create(2);
    const Tensor x1{{1, 10}, {3, 20}, {5, 60}};
    const Tensor x2{{0, 1}, {2, 1}, {4, 4}};

    SUBCASE("training: batch statistics, running statistics by PyTorch's formula") {
        Var y = bn(constant(x1));
        // Feature 0: mean 3, biased variance 8/3.
        CHECK(y.value()(0, 0) == doctest::Approx(-2 / std::sqrt(8.0f / 3 + 1e-5f)));
        bn(constant(x2));
        // running = 0.9·running + 0.1·batch, with the unbiased batch variance; starts at 0 and 1.
        const float mean0 = 0.9f * (0.1f * 3) + 0.1f * 2, var0 = 0.9f * (0.9f + 0.1f * 4) + 0.1f * 4;
        const float mean1 = 0.9f * (0.1f * 30) + 0.1f * 2, var1 = 0.9f * (0.9f + 0.1f * 700) + 0.1f * 3;
        CHECK(bn.running_mean(0) == doctest::Approx(mean0));
        CHECK(bn.running_var(0) == doctest::Approx(var0));
        CHECK(bn.running_mean(1) == doctest::Approx(mean1));
        CHECK(bn.running_var(1) == doctest::Approx(var1));
        CHECK(bn.num_batches_tracked() == 2.0f);
    }
    SUBCASE("test mode uses the running statistics and updates nothing") {
        bn.running_mean = Tensor{1, 2};
        bn.running_var = Tensor{4, 9};
        nn::testmode(bn);
        Var y = bn(constant(x1));
        CHECK(y.value()(2, 1) == doctest::Approx(58 / std::sqrt(9 + 1e-5f)));
        CHECK(bn.running_mean(0) == 1.0f);
        CHECK(bn.num_batches_tracked() == 0.0f);
    }
    SUBCASE("automatic mode: batch statistics while recording, running ones under no-grad") {
        {
            ad::NoGrad no_grad;
            bn(constant(x1));
        }
        CHECK(bn.num_batches_tracked() == 0.0f);
        bn(constant(x1));
        ad::default_tape().reset();
        CHECK(bn.num_batches_tracked() == 1.0f);
    }
    SUBCASE("bad input") {
        CHECK_THROWS_WITH_AS(bn(constant(zeros(Shape{3, 3}))), "BatchNorm: expected input (N, 2), got (3, 3)", ShapeError);
        CHECK_THROWS_WITH_AS(bn(constant(zeros(Shape{1, 2}))), doctest::Contains("more than one value per feature"),
                             ValueError);
    }
    SUBCASE("gradients in training and test mode") {
        bn.weight.value = randn({2}, 3);
        bn.bias.value = randn({2}, 4);
        nn::trainmode(bn);
        check_gradients(bn, randn({5, 2}, 5), [](auto& layer, const Var& x) { return layer(x); });
        nn::testmode(bn);
        check_gradients(bn, randn({5, 2}, 6), [](auto& layer, const Var& x) { return layer(x); });
    }
}

TEST_CASE("Dropout") {
    const Tensor x = full(Shape{1000}, 1.0f);
    auto mask_of = [&](const nn::Dropout& d) { return d(constant(x)).value(); };

    SUBCASE("a restored generator reproduces the mask bit for bit") {
        for (bool shared : {true, false}) {
            auto d = nn::Dropout::create(0.3f, shared ? nullptr : std::make_shared<Generator>(9));
            CHECK((d.rng == default_generator()) == shared);
            const auto state = d.rng->state();
            const Tensor first = mask_of(d);
            const Tensor second = mask_of(d);
            CHECK(first != second);  // the stream moves on
            d.rng->set_state(state);
            CHECK(mask_of(d) == first);
            const auto dropped = xt::sum(xt::equal(first, 0.0f))();
            CHECK(dropped > 230);
            CHECK(dropped < 370);
            CHECK(xt::amax(first)() == doctest::Approx(1 / 0.7f));
        }
    }
    SUBCASE("dropouts share the default generator unless given their own") {
        auto a = nn::Dropout::create(0.5f), b = nn::Dropout::create(0.5f);
        auto own = nn::Dropout::create(0.5f, std::make_shared<Generator>(1));
        const auto start = default_generator()->state();
        mask_of(a);
        mask_of(b);
        CHECK(default_generator()->state().offset == start.offset + 2 * 250);
        mask_of(own);
        CHECK(default_generator()->state().offset == start.offset + 2 * 250);
    }
    SUBCASE("modes") {
        auto d = nn::Dropout::create(0.5f);
        {
            ad::NoGrad no_grad;  // automatic: inactive when the user records no gradients
            CHECK(mask_of(d) == x);
        }
        CHECK(mask_of(d) != x);  // automatic: active while recording
        d.mode = nn::Mode::test;
        CHECK(mask_of(d) == x);
        d.mode = nn::Mode::train;
        ad::NoGrad no_grad;
        CHECK(mask_of(d) != x);
    }
    CHECK_THROWS_AS(nn::Dropout::create(1.5f), ValueError);
    SUBCASE("gradient: the same mask scales the gradient") {
        auto d = nn::Dropout::create(0.4f, std::make_shared<Generator>(3));
        check_gradients(d, randn({6, 5}, 1), [](auto& layer, const Var& x) {
            layer.rng->seed(3);  // every evaluation draws the same mask
            return layer(x);
        });
    }
    ad::default_tape().reset();
}

TEST_CASE("MultiHeadAttention") {
    Generator rng(21);
    SUBCASE("causal: a position never sees later ones") {
        auto attn = nn::MultiHeadAttention::create(8, 2, rng, true);
        Tensor x = randn({1, 5, 8}, 1);
        Tensor changed = x;
        xt::view(changed, 0, 4) += 3.0f;  // only the last position changes
        ad::NoGrad no_grad;
        const Tensor a = attn(constant(x)).value(), b = attn(constant(changed)).value();
        CHECK(xt::view(a, 0, xt::range(0, 4)) == xt::view(b, 0, xt::range(0, 4)));
        CHECK(xt::view(a, 0, 4) != xt::view(b, 0, 4));
    }
    SUBCASE("padding: masked keys do not matter") {
        auto attn = nn::MultiHeadAttention::create(8, 4, rng, false);
        Tensor x = randn({2, 4, 8}, 2);
        Tensor mask{{1, 1, 1, 0}, {1, 1, 1, 1}};
        Tensor changed = x;
        xt::view(changed, 0, 3) -= 5.0f;  // a padding position of sequence 0
        ad::NoGrad no_grad;
        const Tensor a = attn(constant(x), &mask).value(), b = attn(constant(changed), &mask).value();
        CHECK(xt::allclose(xt::view(a, 0, xt::range(0, 3)), xt::view(b, 0, xt::range(0, 3))));
    }
    SUBCASE("against a single-head hand computation") {
        auto attn = nn::MultiHeadAttention::create(2, 1, rng, false);
        attn.in_proj.weight.value = xt::concatenate(xt::xtuple(xt::eye<float>(2), xt::eye<float>(2), xt::eye<float>(2)), 0);
        attn.out_proj.weight.value = xt::eye<float>(2);
        Tensor x{{{1, 0}, {0, 1}}};
        ad::NoGrad no_grad;
        Var y = attn(constant(x));
        // Query (1, 0): scores (1, 0)/√2 → weights σ = softmax; y0 = σ0·(1, 0) + σ1·(0, 1)
        const float e = std::exp(1 / std::sqrt(2.0f));
        CHECK(y.value()(0, 0, 0) == doctest::Approx(e / (e + 1)));
        CHECK(y.value()(0, 0, 1) == doctest::Approx(1 / (e + 1)));
    }
    SUBCASE("errors") {
        auto attn = nn::MultiHeadAttention::create(8, 2, rng);
        CHECK_THROWS_WITH_AS(attn(constant(zeros(Shape{2, 8}))), "MultiHeadAttention: expected input (B, T, C), got (2, 8)",
                             ShapeError);
        CHECK_THROWS_WITH_AS(attn(constant(zeros(Shape{1, 2, 6}))),
                             "in_proj: Linear: expected input (…, 8), got (1, 2, 6)", ShapeError);
        CHECK_THROWS_AS(nn::MultiHeadAttention::create(8, 3, rng), ValueError);
    }
    SUBCASE("gradients, causal with padding") {
        auto attn = nn::MultiHeadAttention::create(4, 2, rng, true);
        Tensor mask{{1, 1, 0}, {1, 1, 1}};
        check_gradients(attn, randn({2, 3, 4}, 3), [&](auto& layer, const Var& x) { return layer(x, &mask); });
    }
}

TEST_CASE("combinators") {
    Generator rng(4);
    auto mlp = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(4, 6, g); }, nn::gelu_tanh,
                              [](Generator& g) { return nn::Linear::create(6, 4, g); });
    SUBCASE("Chain, SkipConnection, Parallel compute what they say") {
        Tensor x = randn({3, 4}, 1);
        ad::NoGrad no_grad;
        const Var h = std::get<0>(mlp.layers)(constant(x));
        const Tensor expected = std::get<2>(mlp.layers)(ops::gelu_tanh(h)).value();
        CHECK(mlp(constant(x)).value() == expected);
        nn::SkipConnection skip{mlp, nn::Add{}};
        CHECK(skip(constant(x)).value() == expected + x);
        nn::Parallel par{nn::Concat{}, std::tuple{mlp, nn::relu}};
        Var both = par(constant(x));
        CHECK(both.shape() == Shape{3, 8});
    }
    SUBCASE("errors carry the path to the failing layer") {
        nn::SkipConnection skip{mlp, nn::Add{}};
        CHECK_THROWS_WITH_AS(skip(constant(zeros(Shape{2, 5}))), "layer.layers.0: Linear: expected input (…, 4), got (2, 5)",
                             ShapeError);
        try {
            skip(constant(zeros(Shape{2, 5})));
        } catch (const Error& e) {
            CHECK(e.path() == "layer.layers.0");
            CHECK(e.message() == "Linear: expected input (…, 4), got (2, 5)");
        }
    }
    SUBCASE("gradients") {
        nn::SkipConnection skip{mlp, nn::Add{}};
        // gelu's curvature: the central difference's own error (∝ step², measured 0.0023, 0.0040 and 0.037
        // at steps 3e-3, 1e-2 and 3e-2) is the largest term for one small component.
        check_gradients(skip, randn({2, 4}, 2), [](auto& layer, const Var& x) { return layer(x); }, 6e-3);
        nn::Parallel par{nn::Concat{}, std::tuple{mlp, nn::Linear::create(4, 2, rng)}};
        check_gradients(par, randn({2, 4}, 3), [](auto& layer, const Var& x) { return layer(x); });
    }
}

TEST_CASE("modes and freezing through nested structures") {
    Generator rng(6);
    // tanh, not relu: finite differences below must not straddle a kink
    auto model = nn::chain(nn::Linear::create(3, 5, rng), nn::BatchNorm::create(5), nn::tanh, nn::Dropout::create(0.2f),
                           nn::Linear::create(5, 1, rng));
    nn::testmode(model);
    CHECK(std::get<1>(model.layers).mode == nn::Mode::test);
    CHECK(std::get<3>(model.layers).mode == nn::Mode::test);
    nn::trainmode(model);
    CHECK(std::get<3>(model.layers).mode == nn::Mode::train);
    nn::automode(model);
    CHECK(std::get<1>(model.layers).mode == nn::Mode::automatic);

    SUBCASE("frozen parameters get no gradient and no update; everything else still trains") {
        nn::freeze(model, [](const std::string& path) { return path.rfind("layers.4.", 0) == 0; });
        CHECK(std::get<4>(model.layers).weight.frozen);
        CHECK(std::get<4>(model.layers).bias->frozen);
        CHECK_FALSE(std::get<0>(model.layers).weight.frozen);
        nn::testmode(model);  // deterministic, to compare with finite differences
        Tensor x = randn({4, 3}, 7);
        auto [loss, grads] = train::withgradient([&](auto& m) { return ops::sum(m(constant(x))); }, model);
        CHECK(std::get<4>(grads.layers).weight.value.size() == 0);
        CHECK(xt::sum(xt::abs(std::get<0>(grads.layers).weight.value))() > 0.0f);  // flows through the frozen layer
        check_gradients(model, x, [](auto& m, const Var& in) { return m(in); });
        nn::thaw(model);
        CHECK_FALSE(std::get<4>(model.layers).weight.frozen);
    }
}
