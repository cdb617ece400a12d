#include <doctest/doctest.h>

#include <sys/resource.h>

#include <random>
#include <thread>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/tensor.hpp"
#include "remat/ops/elementwise.hpp"
#include "remat/ops/reduce.hpp"

using namespace remat;

TEST_CASE("memory tracker") {
    SUBCASE("counts live bytes of tensors exactly") {
        const std::size_t before = memory::live_bytes();
        {
            Tensor a = zeros(Shape{3, 5});
            CHECK(memory::live_bytes() - before == 3 * 5 * sizeof(float));
            Tensor b = zeros(Shape{7});
            CHECK(memory::live_bytes() - before == (15 + 7) * sizeof(float));
        }
        CHECK(memory::live_bytes() == before);
    }

    SUBCASE("peak of a known computation equals the bytes counted by hand") {
        Tensor a = full(Shape{100, 10}, 1.0f);  // 4000 bytes, before the measured region
        memory::PeakScope scope;
        {
            // No recording: y = a * a (4000 B), z = sum(y) (a 0-d tensor: 4 B) — y is still alive then.
            ad::NoGrad no_grad;
            Var x(std::make_shared<const Tensor>(a));  // copies a: 4000 B
            Var y = x * x;                             // 4000 B
            Var z = ops::sum(y);                       // 4 B
            CHECK(z.value()() == doctest::Approx(1000.0));
        }
        CHECK(scope.peak_above_baseline() == 4000 + 4000 + 4);
        CHECK(memory::live_bytes() == scope.baseline());
    }

    SUBCASE("saved tensors are freed as soon as backward has used them") {
        Tensor w = full(Shape{256}, 2.0f);
        auto& tape = ad::default_tape();
        tape.clear_grads();
        const std::size_t before = memory::live_bytes();
        {
            Var x = ad::leaf(w);
            Var y = x * x;  // saved: the same w twice (borrowed, not copied); y: 1024 B
            Var loss = ops::sum(y);
            CHECK(memory::live_bytes() - before == 1024 + 4);
            tape.backward(loss);
        }
        // Only the leaf gradient of w remains.
        CHECK(memory::live_bytes() - before == 1024);
        CHECK((*tape.grad(w))(0) == 4.0f);
        tape.clear_grads();
        CHECK(memory::live_bytes() == before);
    }

    SUBCASE("thread-safe counting") {
        const std::size_t before = memory::live_bytes();
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([] {
                for (int i = 0; i < 2000; ++i) {
                    Tensor x = zeros(Shape{16 + static_cast<std::size_t>(i % 7)});
                }
            });
        for (auto& t : threads) t.join();
        CHECK(memory::live_bytes() == before);
    }
}

TEST_CASE("large blocks are reused, within a bound") {
    memory::release_cached();
    const std::size_t big = 1 << 20;  // floats: 4 MiB

    SUBCASE("a freed large block serves the next tensor of the same size") {
        const float* first;
        {
            Tensor a = empty(Shape{big});
            first = a.data();
        }
        CHECK(memory::cached_bytes() == big * sizeof(float));
        Tensor b = empty(Shape{big});
        CHECK(b.data() == first);
        CHECK(memory::cached_bytes() == 0);
        Tensor c = empty(Shape{big / 2});  // another size: a fresh block
        CHECK(c.data() != first);
    }

    SUBCASE("cached bytes are not live bytes; release_cached gives them back") {
        const std::size_t live = memory::live_bytes();
        { Tensor a = empty(Shape{big}); }
        CHECK(memory::live_bytes() == live);
        CHECK(memory::cached_bytes() == big * sizeof(float));
        memory::release_cached();
        CHECK(memory::cached_bytes() == 0);
    }

    SUBCASE("small blocks are left to malloc") {
        { Tensor a = empty(Shape{1000}); }
        CHECK(memory::cached_bytes() == 0);
    }

    SUBCASE("live + cached stays within 1.25x the highest live bytes") {
        // Tensors of many sizes kept and dropped at random: sizes never repeat exactly, the worst
        // case for a cache keyed by size. The first batch raises highest_bytes(), so the bound bites.
        std::mt19937 rng(7);
        std::vector<Tensor> kept;
        for (int i = 0; i < 400; ++i) {
            if (!kept.empty() && rng() % 3 == 0) kept.erase(kept.begin() + static_cast<long>(rng() % kept.size()));
            else if (kept.size() < 12) kept.push_back(empty(Shape{(1u << 14) + rng() % (1u << 18)}));
            const std::size_t highest = memory::highest_bytes();
            CHECK(highest >= memory::live_bytes());
            CHECK(memory::live_bytes() + memory::cached_bytes() <= highest + highest / 4);
        }
    }

    SUBCASE("threads freeing and taking large blocks at once") {
        const std::size_t live = memory::live_bytes();
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([t] {
                for (int i = 0; i < 200; ++i) {
                    Tensor x = empty(Shape{(1u << 14) + static_cast<std::size_t>((i + t) % 5) * 4096});
                    x.fill(static_cast<float>(t));
                    CHECK_MESSAGE(x(x.size() - 1) == static_cast<float>(t), "a block shared by two threads");
                }
            });
        for (auto& t : threads) t.join();
        CHECK(memory::live_bytes() == live);
        CHECK(memory::cached_bytes() > 0);
    }

    SUBCASE("a repeated step takes no fresh pages") {
        // Without the cache, malloc hands blocks this large back to the kernel (munmap) and the next
        // step faults every page in again: 32 MiB a step is 8192 faults.
        auto step = [&] {
            std::vector<Tensor> acts;
            for (int i = 0; i < 8; ++i) {
                acts.push_back(empty(Shape{big}));
                acts.back().fill(1.0f);  // touch every page
            }
        };
        step();
        rusage before{}, after{};
        getrusage(RUSAGE_SELF, &before);
        for (int i = 0; i < 5; ++i) step();
        getrusage(RUSAGE_SELF, &after);
        CHECK(after.ru_minflt - before.ru_minflt < 1000);
    }
    memory::release_cached();
}
