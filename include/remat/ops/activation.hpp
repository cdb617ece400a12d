#pragma once
// Activations, element-wise.
#include "remat/ad/var.hpp"

namespace remat::ops {

// GELU, tanh approximation (HF "gelu_new", GPT-2): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
Var gelu_tanh(const Var& x);
// GELU, exact (HF "gelu", BERT): 0.5·x·(1 + erf(x/√2))
Var gelu_erf(const Var& x);
Var relu(const Var& x);
Var tanh(const Var& x);
Var sigmoid(const Var& x);  // 1 / (1 + e⁻ˣ); d/dx = σ(x)·(1 − σ(x))
// SiLU (HF "silu", "swish"): x·σ(x); d/dx = σ(x)·(1 + x·(1 − σ(x)))
Var silu(const Var& x);
// SwiGLU's product, fused (Llama's MLP before down_proj): silu(gate) ⊙ up, same shapes. Keeps only
// gate and up for backward, not silu(gate).
Var silu_mul(const Var& gate, const Var& up);

}  // namespace remat::ops
