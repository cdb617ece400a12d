#include <doctest/doctest.h>

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
