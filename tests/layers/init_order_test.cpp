#include <doctest/doctest.h>

#include "remat/layers.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;

TEST_CASE("chain_from draws in the order the layers are written") {
    Generator rng(7);
    auto model = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(4, 16, g); }, nn::gelu_tanh,
                                nn::Dropout::create(0.1f), [](Generator& g) { return nn::Linear::create(16, 4, g); });
    // The same draws as sequenced statements.
    Generator seq(7);
    auto first = nn::Linear::create(4, 16, seq);
    auto second = nn::Linear::create(16, 4, seq);
    CHECK(test::same_bits(std::get<0>(model.layers).weight.value, first.weight.value));
    CHECK(test::same_bits(std::get<3>(model.layers).weight.value, second.weight.value));
    CHECK(rng.state() == seq.state());
    static_assert(std::is_same_v<decltype(model), nn::Chain<nn::Linear, nn::GeluTanh, nn::Dropout, nn::Linear>>);

    SUBCASE("makers nest: a Chain inside a Chain") {
        Generator a(3), b(3);
        auto nested = nn::chain_from(a, [](Generator& g) {
            return nn::chain_from(g, [](Generator& h) { return nn::Linear::create(2, 3, h); });
        }, [](Generator& g) { return nn::Linear::create(3, 1, g); });
        auto x = nn::Linear::create(2, 3, b);
        auto y = nn::Linear::create(3, 1, b);
        CHECK(test::same_bits(std::get<0>(std::get<0>(nested.layers).layers).weight.value, x.weight.value));
        CHECK(test::same_bits(std::get<1>(nested.layers).weight.value, y.weight.value));
    }
}

TEST_CASE("Generator::fork: independent streams keyed by (seed, stream)") {
    Generator g(42);
    const Generator a = g.fork(0), b = g.fork(1);
    CHECK(a.state().key != b.state().key);
    CHECK(a.state().offset == 0);
    CHECK(g.state() == Generator(42).state());  // the parent drew nothing
    float skip[8];
    g.fill_uniform(skip, 8);
    CHECK(g.fork(0).state() == a.state());  // nor does the parent's position matter
    CHECK(Generator(43).fork(0).state() != a.state());
    CHECK(a.fork(0).state() != a.state());
}
