// The kernels' thread pool (src/ops/parallel.hpp): every piece runs once, a throwing piece reaches
// the caller and leaves the pool usable, nested calls run serially, and the thread count is a knob.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "remat/ops/threads.hpp"
#include "src/ops/parallel.hpp"

using namespace remat;

TEST_CASE("kernel thread pool") {
    const std::size_t threads = ops::num_threads();
    ops::set_num_threads(2);
    SUBCASE("every piece exactly once") {
        std::vector<std::atomic<int>> runs(1000);
        ops::detail::parallel_for(runs.size(), [&](std::size_t p) { runs[p].fetch_add(1); });
        for (auto& r : runs) CHECK(r.load() == 1);
    }
    SUBCASE("a piece's exception reaches the caller; the pool still works") {
        CHECK_THROWS_WITH_AS(ops::detail::parallel_for(64,
                                                       [](std::size_t p) {
                                                           if (p == 17) throw std::runtime_error("piece 17");
                                                       }),
                             "piece 17", std::runtime_error);
        std::atomic<std::size_t> sum{0};
        ops::detail::parallel_for(100, [&](std::size_t p) { sum += p; });
        CHECK(sum.load() == 4950);
    }
    SUBCASE("calls after the workers went to sleep, and back to back while they poll") {
        for (int round = 0; round < 20; ++round) {
            std::atomic<int> runs{0};
            ops::detail::parallel_for(4, [&](std::size_t) { ++runs; });
            CHECK(runs.load() == 4);
            if (round % 2) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the 100 µs poll
        }
    }
    SUBCASE("nested calls run serially") {
        std::atomic<int> inner{0};
        ops::detail::parallel_for(4, [&](std::size_t) { ops::detail::parallel_for(8, [&](std::size_t) { ++inner; }); });
        CHECK(inner.load() == 32);
    }
    SUBCASE("ranges cover [0, n) in pieces of the grain") {
        std::vector<int> seen(1003, 0);
        ops::detail::parallel_ranges(seen.size(), 100, [&](std::size_t b, std::size_t e) {
            CHECK((e - b == 100 || e == seen.size()));
            for (std::size_t i = b; i < e; ++i) ++seen[i];
        });
        for (int s : seen) CHECK(s == 1);
    }
    ops::set_num_threads(1);
    CHECK(ops::num_threads() == 1);
    std::atomic<int> serial{0};
    ops::detail::parallel_for(10, [&](std::size_t) { ++serial; });
    CHECK(serial.load() == 10);
    ops::set_num_threads(threads);
}
