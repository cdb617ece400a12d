// EpochOrder: a bijection of [0, n) for every n, a pure function of (seed, epoch).
#include <doctest/doctest.h>

#include <vector>

#include "remat/core/error.hpp"
#include "remat/data/epoch_order.hpp"

using remat::data::EpochOrder;

TEST_CASE("EpochOrder") {
    SUBCASE("every window exactly once, for many n") {
        std::vector<std::uint64_t> sizes = {0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33, 64, 97, 100, 127, 128, 129,
                                            255, 256, 257, 1000, 1021, 1024, 4096, 4099, 65521, 65536, 65537, 100003};
        for (std::uint64_t n : sizes)
            for (std::uint64_t seed : {0ull, 1ull, 0xdeadbeefcafef00dull}) {
                CAPTURE(n);
                CAPTURE(seed);
                const EpochOrder order(seed, 3, n);
                CHECK(order.size() == n);
                std::vector<char> seen(n, 0);
                for (std::uint64_t i = 0; i < n; ++i) {
                    const std::uint64_t w = order[i];
                    REQUIRE(w < n);
                    REQUIRE(seen[w] == 0);
                    seen[w] = 1;
                }
                CHECK_THROWS_AS(order[n], remat::ValueError);
            }
    }
    SUBCASE("a pure function of (seed, epoch); other epochs and seeds give other orders") {
        const std::uint64_t n = 1000;
        auto order = [&](std::uint64_t seed, std::uint64_t epoch) {
            std::vector<std::uint64_t> v;
            const EpochOrder o(seed, epoch, n);
            for (std::uint64_t i = 0; i < n; ++i) v.push_back(o[i]);
            return v;
        };
        CHECK(order(7, 0) == order(7, 0));
        CHECK(order(7, 0) != order(7, 1));
        CHECK(order(7, 1) != order(7, 2));
        CHECK(order(7, 0) != order(8, 0));
        std::vector<std::uint64_t> identity(n);
        for (std::uint64_t i = 0; i < n; ++i) identity[i] = i;
        CHECK(order(7, 0) != identity);
        // Random access: a resumed run asks for index i directly.
        const EpochOrder o(7, 1, n);
        CHECK(o[500] == order(7, 1)[500]);
    }
    SUBCASE("huge n: indices are computed, not stored") {
        const std::uint64_t n = 1'200'000'000'000ull;
        const EpochOrder o(1, 0, n);
        for (std::uint64_t i = 0; i < 1000; ++i) CHECK(o[i * 1'000'000'007ull % n] < n);
        const EpochOrder all(1, 0, ~0ull);
        CHECK(all[12345] < ~0ull);
    }
}
