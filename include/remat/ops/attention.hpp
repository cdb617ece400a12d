#pragma once
// Fused multi-head attention: per head h, y_h = dropout(softmax(q_h·k_hᵀ/√D, masks)) · v_h.
// The heads are read straight from the feature axis of q, k, v (head h is features [h·D, (h+1)·D))
// and written back merged, so no permuted copies exist; the probabilities are never stored either:
// the forward keeps one max and one 1/Σ per row, and backward recomputes the scores from q and k
// (as flash attention does), bit for bit as the forward had them.
#include "remat/ad/var.hpp"
#include "remat/core/random.hpp"
#include "remat/ops/softmax.hpp"

namespace remat::ops {

// Dropout on the probabilities: the mask ops::dropout would draw for the (B, H, Tq, Tk) probability
// tensor (same generator advance, same kept elements). p = 0 or no generator: no dropout.
struct AttentionDropout {
    float p = 0.0f;
    Generator* generator = nullptr;
};

// q (B, Tq, C), k and v (B, Tk, C_kv), n_head query heads of D = C / n_head -> (B, Tq, C). k and v
// may hold fewer heads (grouped-query attention; one head: multi-query): C_kv / D heads, each read
// by n_head / (C_kv / D) consecutive query heads, as HF's repeat_kv — without the copies. The masks
// are softmax's (causal: query i sees key j ≤ i + Tk − Tq; key_padding (B, Tk) of 1 attend, 0
// padding; a sliding window; the key starts of packed sequences), with the same treatment of rows that see no key (HF's finfo.min
// arithmetic, SoftmaxMask::combined). Such a row does not depend on the scores: with two masks no
// gradient flows from it into q or k; with combined masks it sends what HF's autograd sends (the
// softmax Jacobian at the uniform row), as a left-padded batch's loss does in HF.
Var attention(const Var& q, const Var& k, const Var& v, std::size_t n_head, const SoftmaxMask& mask = {},
              const AttentionDropout& dropout = {});
// qkv (B, T, 3C) holding q, k, v in that order (GPT-2's c_attn output) -> (B, T, C).
Var attention(const Var& qkv, std::size_t n_head, const SoftmaxMask& mask = {}, const AttentionDropout& dropout = {});

}  // namespace remat::ops
