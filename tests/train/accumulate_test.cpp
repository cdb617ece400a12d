#include <doctest/doctest.h>

#include <cmath>

#include "remat/layers.hpp"
#include "remat/train/accumulate.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;

TEST_CASE("adding gradient trees") {
    Generator rng(5);
    auto model = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(3, 2, g); }, nn::BatchNorm::create(2));
    auto a = model, b = model;
    std::get<0>(a.layers).weight.value = Tensor{{1, 2, 3}, {4, 5, 6}};
    std::get<0>(b.layers).weight.value = Tensor{{0.5f, -2, 0}, {1e-8f, 0, -0.0f}};
    std::get<0>(a.layers).bias->value = Tensor{-0.0f, 0.0f};
    std::get<0>(b.layers).bias->value = Tensor{0.0f, -0.0f};

    SUBCASE("element by element, in one defined order") {
        auto sum = train::add(a, b);
        const Tensor expected{{1.5f, 0, 3}, {4 + 1e-8f, 5, 6}};
        CHECK(test::same_bits(std::get<0>(sum.layers).weight.value, expected));
        // IEEE: −0 + +0 = +0 either way round.
        CHECK_FALSE(std::signbit(std::get<0>(sum.layers).bias->value(0)));
        CHECK_FALSE(std::signbit(std::get<0>(sum.layers).bias->value(1)));
        CHECK(std::get<0>(a.layers).weight.value(0, 0) == 1.0f);  // inputs untouched
        auto into = a;
        train::accumulate(into, b);
        CHECK(test::same_bits(std::get<0>(into.layers).weight.value, std::get<0>(sum.layers).weight.value));
    }
    SUBCASE("BatchNorm's parameters are added too; its buffers are left alone") {
        auto& bn = std::get<1>(a.layers);
        const Tensor mean_before = bn.running_mean;
        auto sum = train::add(a, b);
        CHECK(std::get<1>(sum.layers).weight.value(0) == 2.0f);  // 1 + 1
        CHECK(test::same_bits(std::get<1>(sum.layers).running_mean, mean_before));
    }
    SUBCASE("a shape mismatch names the parameter") {
        std::get<0>(b.layers).bias->value = Tensor{1.0f, 2.0f, 3.0f};
        CHECK_THROWS_WITH_AS(train::accumulate(a, b), "accumulate: gradient layers.0.bias: (2,) += (3,)", ShapeError);
    }
}
