#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "remat/core/random.hpp"

using namespace remat;

TEST_CASE("Philox4x32-10") {
    SUBCASE("known-answer vectors of Random123") {
        CHECK(philox4x32({0, 0, 0, 0}, {0, 0}) == std::array<std::uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
        CHECK(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
              std::array<std::uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
        CHECK(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
              std::array<std::uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
    }

    SUBCASE("a restored state reproduces the stream bit for bit") {
        Generator g(42);
        std::vector<float> skip(13);
        g.fill_uniform(skip.data(), skip.size());
        const auto snapshot = g.state();
        CHECK(sizeof(snapshot) == 16);
        std::vector<float> first(101), second(101);
        g.fill_uniform(first.data(), first.size());
        g.set_state(snapshot);
        g.fill_uniform(second.data(), second.size());
        CHECK(first == second);
    }

    SUBCASE("blocks drawn many at a time are the blocks drawn one by one, bit for bit") {
        // Counts around the vector width (16), and a counter whose low word wraps inside the range.
        for (const Generator::State s : {Generator::State{0x5EED, 0}, Generator::State{~0ull, 0xfffffff5ull},
                                         Generator::State{12345, (1ull << 40) + 3}})
            for (const std::size_t count : {1, 15, 16, 17, 40}) {
                std::vector<std::uint32_t> many(4 * count);
                block_bits(s, 2, count, many.data());
                std::vector<std::uint32_t> one_by_one;
                for (std::size_t b = 0; b < count; ++b)
                    for (const std::uint32_t word : block_bits(s, 2 + b)) one_by_one.push_back(word);
                CHECK(many == one_by_one);
            }
    }

    SUBCASE("the stream is split into blocks: n draws advance ceil(n/4) blocks") {
        Generator a(7), b(7);
        std::vector<std::uint32_t> x(10), y(12);
        a.fill_bits(x.data(), 10);
        b.fill_bits(y.data(), 12);
        CHECK(a.state() == b.state());
        CHECK(std::equal(x.begin(), x.end(), y.begin()));
    }

    SUBCASE("uniform and normal moments") {
        Generator g(1);
        std::vector<float> u(200000), n(200000);
        g.fill_uniform(u.data(), u.size());
        g.fill_normal(n.data(), n.size(), 1.0f, 2.0f);
        double su = 0, sn = 0, sn2 = 0;
        for (float v : u) su += v;
        CHECK(*std::min_element(u.begin(), u.end()) >= 0.0f);
        CHECK(*std::max_element(u.begin(), u.end()) < 1.0f);
        for (float v : n) {
            sn += v;
            sn2 += (v - 1.0) * (v - 1.0);
        }
        CHECK(su / u.size() == doctest::Approx(0.5).epsilon(0.01));
        CHECK(sn / n.size() == doctest::Approx(1.0).epsilon(0.02));
        CHECK(std::sqrt(sn2 / n.size()) == doctest::Approx(2.0).epsilon(0.01));
    }
}
