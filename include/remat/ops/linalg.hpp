#pragma once
// Matrix products through BLAS sgemm.
#include <memory>

#include "remat/ad/var.hpp"
#include "remat/core/random.hpp"

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

// A low-rank term added to a linear layer's output: down (..., r) · upᵀ, up (out, r) — LoRA's
// s · B (A (dropout(x))) with down = dropout_linear(x, A, s, …) and up = B. Undefined: none.
struct LowRank {
    Var down, up;
};

// y = x·W + b (+ down·upᵀ) over the last axis of x (..., in) -> (..., out). b (out,) may be
// undefined (no bias). The low-rank term is added inside the product (y starts as b + down·upᵀ and
// the product accumulates onto it): no tensor of its own, forward or backward. Recorded as
// OpKind::projection, or OpKind::narrowing when out < in features, so that selective checkpointing
// can keep its output.
Var linear(const Var& x, const Var& weight, const Var& bias, WeightLayout layout, const LowRank& update = {});
// linear with a weight held in bf16 (Param::hold_bf16, a frozen parameter): a constant, so
// gradients flow to x, b and the low-rank term only, and the product runs in bf16 whatever the
// precision (there are no float32 values): bitwise what the float32 weight gives under Autocast(bf16).
// The low-rank term's product runs in the current precision.
Var linear(const Var& x, const std::shared_ptr<const HeldBf16>& weight, const Var& bias, WeightLayout layout,
           const LowRank& update = {});

// scale · dropout(x)·aᵀ, x (..., in), a (r, in) -> (..., r): LoRA's down projection. The dropout
// (probability p from `generator`, needed when p > 0) is ops::dropout's, mask for mask, and the
// generator advances as it does, but dropout(x) is never made: its mask is drawn and applied a tile of
// x at a time; backward keeps x and the mask, a byte per element. Always float32: a product with r columns
// is bound by reading x, which a bf16 copy would only add a pass to.
Var dropout_linear(const Var& x, const Var& a, float scale, float p = 0.0f, Generator* generator = nullptr);

}  // namespace remat::ops
