#pragma once
// Matrix products through BLAS sgemm.
#include <memory>

#include "remat/ad/var.hpp"

namespace remat {
struct HeldBf16;  // remat/core/param.hpp
}

namespace remat::ops {

// C = op(a) · op(b), op = transpose when asked.
//   a (..., M, K) · b (K, N)          -> (..., M, N)   leading dims of a flattened into M
//   a (B..., M, K) · b (B..., K, N)   -> (B..., M, N)  batched, equal batch dims
// transpose_a needs rank-2 a or the batched form. Shape mismatches throw ShapeError.
Var matmul(const Var& a, const Var& b, bool transpose_a = false, bool transpose_b = false);

// How a projection's weight is stored.
enum class WeightLayout {
    in_out,  // (in, out): HF GPT-2's Conv1D, y = x·W + b
    out_in,  // (out, in): PyTorch's Linear, y = x·Wᵀ + b
};

// y = x·W + b over the last axis of x (..., in) -> (..., out). b (out,) may be undefined (no bias).
// Recorded as OpKind::projection, or OpKind::narrowing when out < in features, so that selective
// checkpointing can keep its output.
Var linear(const Var& x, const Var& weight, const Var& bias, WeightLayout layout);
// base + x·W, base of the output's shape: a product added onto a tensor in one pass (LoRA's update
// onto its layer's output), without the product's own output or the sum's. Recorded like linear.
Var add_linear(const Var& base, const Var& x, const Var& weight, WeightLayout layout);
// linear with a weight held in bf16 (Param::hold_bf16, a frozen parameter): a constant, so
// gradients flow to x and b only, and the product runs in bf16 whatever the precision (there are no
// float32 values): bitwise what the float32 weight gives under Autocast(bf16).
Var linear(const Var& x, const std::shared_ptr<const HeldBf16>& weight, const Var& bias, WeightLayout layout);

}  // namespace remat::ops
