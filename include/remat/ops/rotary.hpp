#pragma once
// Rotary position embedding in HF's rotate-half convention (Llama's apply_rotary_pos_emb): per head
// of D features, y = x·cos + rotate_half(x)·sin with rotate_half([x₁, x₂]) = [−x₂, x₁], the two halves
// D/2 wide. The tables hold one row per position (layers/rotary.hpp builds them from the frequencies).
#include "remat/ad/var.hpp"

namespace remat::ops {

// x (B, T, H·D) with cos and sin (T, D), or (B, T, D) when each sequence has its own positions (a
// left-padded batch in generation) -> (B, T, H·D); H follows from the width.
Var rotary(const Var& x, const Tensor& cos, const Tensor& sin);

}  // namespace remat::ops
