#pragma once
// Multi-head self-attention:
//   q, k, v = split(in_proj(x)); per head: softmax(q·kᵀ / √D, masks) · v; out_proj(concat heads)
// x (B, T, C) -> (B, T, C), H heads of D = C / H. The functional core is shared by the GPT-2 and
// BERT blocks, whose projections have HuggingFace's names.
#include <memory>

#include "remat/layers/dropout.hpp"
#include "remat/layers/linear.hpp"
#include "remat/ops/softmax.hpp"

namespace remat::nn {

// HF's attention_mask (B, T) of 1 (attend) and 0 (padding), as the float mask softmax takes; shared,
// so that checkpointed blocks can keep it until their recomputation.
using PaddingMask = std::shared_ptr<const Tensor>;
PaddingMask padding_mask(const IdTensor& attention_mask);
// Whether an optional id input was given (a default-constructed IdTensor is 0-d).
inline bool given(const IdTensor& t) { return t.dimension() > 0; }

// Sequences packed into one row, as transformers detects them from position_ids (B, T): a sequence
// begins at t = 0 and wherever position_ids[t] ≠ position_ids[t − 1] + 1. Its tokens attend only
// within it (SoftmaxMask::key_start: each token's sequence's first position). Null when every row
// is one sequence, so unpacked batches take the plain causal path. Shared, as PaddingMask.
using SequenceStarts = std::shared_ptr<const IdTensor>;
SequenceStarts sequence_starts(const IdTensor& position_ids);

// q (B, T, C), k and v (B, T', C_kv) -> softmax(q·kᵀ/√D, mask) · v per head, (B, T, C); k and v
// may hold fewer heads than q (grouped-query attention, ops::attention), and more positions, T' ≥ T
// (a KV cache: the queries are the last T positions, for the causal mask).
Var attention(const Var& q, const Var& k, const Var& v, std::size_t n_head, const ops::SoftmaxMask& mask,
              const Dropout* dropout);
// qkv (B, T, 3C) with q, k, v in that order -> (B, T, C). Attention probabilities go through
// `dropout` (may be null) as HF applies attn_pdrop.
Var self_attention(const Var& qkv, std::size_t n_head, const ops::SoftmaxMask& mask, const Dropout* dropout);

struct MultiHeadAttention {
    BOOST_HANA_DEFINE_STRUCT(MultiHeadAttention, (Linear, in_proj), (Linear, out_proj), (Dropout, dropout),
                             (std::size_t, n_head), (bool, causal));
    static constexpr const char* name = "MultiHeadAttention";

    static MultiHeadAttention create(std::size_t features, std::size_t n_head, Generator& rng, bool causal = false,
                                     float dropout_p = 0.0f);
    // key_padding (B, T): 1 attend, 0 padding — HF's attention_mask.
    Var operator()(const Var& x, const Tensor* key_padding = nullptr) const;
};

}  // namespace remat::nn
