#pragma once
// Softmax over the last axis, with the masks attention needs.
#include "remat/ad/var.hpp"

namespace remat::ops {

struct SoftmaxMask {
    // Scores x (..., Tq, Tk): query q may not see key k > q + (Tk − Tq) (GPT-2's causal mask).
    bool causal = false;
    // (B, Tk) of 1 (attend) and 0 (padding), as HF's attention_mask; x must be (B, ..., Tq, Tk).
    const Tensor* key_padding = nullptr;
    // W > 0: a query at q' = q + (Tk − Tq) sees only the keys q' − W < k ≤ q' (Mistral's sliding
    // window, as transformers' masking_utils has it). Needs causal and combined.
    std::size_t window = 0;
    // How a row that sees no key comes out. false: GPT-2's and BERT's two additive masks (below);
    // true: HF's masking_utils (the Llama family), one mask with every hidden score at finfo.min, so
    // such a row is uniform over all Tk keys.
    bool combined = false;
    // (B, Tq) of key indices: query q of batch element b sees only keys k ≥ key_start[b, q] — several
    // sequences packed into one row, each token attending within its own (transformers' packed
    // sequences). Needs causal; each start at most the query's own position.
    const IdTensor* key_start = nullptr;
};

// Throws ShapeError for a window without causal and combined, or key starts without causal, not
// (B, Tq) or past their queries (`op` starts the message).
void check_window(const SoftmaxMask& mask, const char* op);
void check_key_start(const SoftmaxMask& mask, std::size_t B, std::size_t Tq, std::size_t Tk, const char* op);

// Masked scores get probability exactly 0. A row whose visible keys are all padding follows HF's
// finfo.min arithmetic: combined, uniform over all keys; otherwise uniform over the keys hidden by
// exactly one mask (all keys without the causal mask).
Var softmax(const Var& x, const SoftmaxMask& mask = {});

}  // namespace remat::ops
