// bf16 mixed precision (remat/ops/precision.hpp): products read bf16 inputs, accumulate and write
// fp32, in forward and backward; the bits do not depend on the thread count; checkpointed blocks
// recompute with the precision of their forward.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <iterator>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/core/bfloat16.hpp"
#include "remat/core/random.hpp"
#include "remat/ops.hpp"
#include "remat/ops/precision.hpp"
#include "remat/ops/threads.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/random_tensor.hpp"

using namespace remat;
using test::same_bits;

namespace {
using test::random_tensor;

double rounded(float x, bool to_bf16) { return to_bf16 ? from_bfloat16(to_bfloat16(x)) : x; }

// The largest |got − ref| / Σ|terms| over the elements of C = A·B (A (M, K), B (K, N), row-major),
// where ref and the terms are computed in double from A and B rounded to bf16 or not.
double worst_error(const Tensor& got, const Tensor& A, const Tensor& B, std::size_t M, std::size_t K, std::size_t N,
                   bool to_bf16) {
    double worst = 0;
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t n = 0; n < N; ++n) {
            double ref = 0, scale = 0;
            for (std::size_t k = 0; k < K; ++k) {
                const double t = rounded(A.data()[m * K + k], to_bf16) * rounded(B.data()[k * N + n], to_bf16);
                ref += t;
                scale += std::fabs(t);
            }
            worst = std::max(worst, std::fabs(got.data()[m * N + n] - ref) / scale);
        }
    return worst;
}

Tensor transposed(const Tensor& t) {  // (R, C) -> (C, R)
    const std::size_t R = t.shape()[0], C = t.shape()[1];
    Tensor out = empty({C, R});
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t c = 0; c < C; ++c) out.data()[c * R + r] = t.data()[r * C + c];
    return out;
}

struct LinearRun {
    Tensor y, dx, dw;
};

// y = x·Wᵀ (W (out, in), PyTorch's layout) and the gradients of Σ y·g, in the given precision.
LinearRun run_linear(const Tensor& x, const Tensor& w, const Tensor& g, Precision p) {
    auto& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();
    LinearRun r;
    Var loss;
    {
        Autocast scope(p);
        Var xv = tape.leaf(x), wv = tape.leaf(w);
        Var y = ops::linear(xv, wv, Var(), ops::WeightLayout::out_in);
        r.y = y.value();
        loss = ops::sum(y * Var(g));
    }
    tape.backward(loss);  // outside the scope: the op kept its precision
    r.dx = *tape.grad(x);
    r.dw = *tape.grad(w);
    tape.reset();
    tape.clear_grads();
    return r;
}
}  // namespace

TEST_CASE("precision: names and the scope") {
    CHECK(precision() == Precision::fp32);
    {
        Autocast bf16(Precision::bf16);
        CHECK(precision() == Precision::bf16);
        {
            Autocast fp32(Precision::fp32);
            CHECK(precision() == Precision::fp32);
        }
        CHECK(precision() == Precision::bf16);
    }
    CHECK(precision() == Precision::fp32);
    CHECK(parse_precision("bf16") == Precision::bf16);
    CHECK(parse_precision("fp32") == Precision::fp32);
    CHECK(name(Precision::bf16) == "bf16");
    CHECK_THROWS_WITH_AS(parse_precision("fp16"), "unknown precision 'fp16': expected fp32 or bf16", ValueError);
}

TEST_CASE("bf16 products: bf16 inputs, fp32 accumulation, in forward and backward") {
    // Shapes that take every path: bands of rows (M ≥ N) and of columns, one band, a single row.
    const std::size_t shapes[][3] = {{300, 200, 64}, {96, 70, 700}, {5, 7, 3}, {1, 300, 900}};
    for (const auto& shape : shapes) {
        const std::size_t M = shape[0], K = shape[1], N = shape[2];  // CAPTURE is a lambda: clang 14 cannot capture a structured binding
        CAPTURE(M);
        CAPTURE(K);
        CAPTURE(N);
        const Tensor x = random_tensor({M, K}, 1), w = random_tensor({N, K}, 2), g = random_tensor({M, N}, 3);
        const LinearRun b = run_linear(x, w, g, Precision::bf16);
        const LinearRun f = run_linear(x, w, g, Precision::fp32);
        const Tensor wt = transposed(w), gt = transposed(g);
        // Against the double product of the bf16-rounded operands: only fp32 accumulation error.
        CHECK(worst_error(b.y, x, wt, M, K, N, true) < 1e-6);
        CHECK(worst_error(b.dx, g, w, M, N, K, true) < 1e-6);
        CHECK(worst_error(b.dw, gt, x, N, M, K, true) < 1e-6);
        // Against the exact product: bf16's rounding of both inputs, 2·2⁻⁹ at most, and it shows.
        const double y_error = worst_error(b.y, x, wt, M, K, N, false);
        CHECK(y_error < 2 * std::ldexp(1.0, -9) + 1e-6);
        if (K > 8) CHECK(y_error > 1e-4);
        CHECK(worst_error(f.y, x, wt, M, K, N, false) < 1e-5);  // fp32 stays fp32
    }
}

TEST_CASE("bf16 products give the same bits on any number of threads") {
    const std::size_t threads = ops::num_threads();
    const Tensor x = random_tensor({640, 96}, 4), w = random_tensor({1100, 96}, 5), g = random_tensor({640, 1100}, 6);
    ops::set_num_threads(1);
    const LinearRun one = run_linear(x, w, g, Precision::bf16);
    ops::set_num_threads(2);
    const LinearRun two = run_linear(x, w, g, Precision::bf16);
    const LinearRun again = run_linear(x, w, g, Precision::bf16);
    ops::set_num_threads(threads);
    CHECK(same_bits(one.y, two.y));
    CHECK(same_bits(one.dx, two.dx));
    CHECK(same_bits(one.dw, two.dw));
    CHECK(same_bits(two.dw, again.dw));
}

TEST_CASE("bf16 products start no thread of their own: oneDNN's OpenMP runs one thread inside remat's pool") {
    const std::size_t threads = ops::num_threads();
    ops::set_num_threads(2);
    const auto task_count = [] {
        return std::distance(std::filesystem::directory_iterator("/proc/self/task"), std::filesystem::directory_iterator());
    };
    const Tensor x = random_tensor({512, 256}, 11), w = random_tensor({512, 256}, 12), g = random_tensor({512, 512}, 13);
    run_linear(x, w, g, Precision::fp32);  // the pool's worker exists from here on
    const auto before = task_count();
    run_linear(x, w, g, Precision::bf16);  // two bands of rows, one on each pool thread
    CHECK(task_count() == before);
    ops::set_num_threads(threads);
}

TEST_CASE("bf16 batched and shared-weight matmul") {
    auto& tape = ad::default_tape();
    const Tensor a = random_tensor({3, 20, 40}, 7), b = random_tensor({3, 30, 40}, 8), h = random_tensor({2, 6, 40}, 9),
                 e = random_tensor({50, 40}, 10);
    Tensor batched, head;
    {
        Autocast bf16(Precision::bf16);
        batched = ops::matmul(Var(a), Var(b), false, true).value();  // (3, 20, 30)
        head = ops::matmul(Var(h), Var(e), false, true).value();     // (2, 6, 50): a tied LM head
    }
    for (std::size_t i = 0; i < 3; ++i) {
        Tensor ai = empty({20, 40}), bi = empty({30, 40}), ci = empty({20, 30});
        std::copy(a.data() + i * 800, a.data() + (i + 1) * 800, ai.data());
        std::copy(b.data() + i * 1200, b.data() + (i + 1) * 1200, bi.data());
        std::copy(batched.data() + i * 600, batched.data() + (i + 1) * 600, ci.data());
        CHECK(worst_error(ci, ai, transposed(bi), 20, 40, 30, true) < 1e-6);
    }
    Tensor h2 = h;
    h2.reshape({12, 40});
    Tensor head2 = head;
    head2.reshape({12, 50});
    CHECK(worst_error(head2, h2, transposed(e), 12, 40, 50, true) < 1e-6);
    tape.reset();
}
