#pragma once
// Softmax over the last axis, with the masks attention needs.
#include "remat/ad/var.hpp"

namespace remat::ops {

struct SoftmaxMask {
    // Scores x (..., Tq, Tk): query q may not see key k > q + (Tk − Tq) (GPT-2's causal mask).
    bool causal = false;
    // (B, Tk) of 1 (attend) and 0 (padding), as HF's attention_mask; x must be (B, ..., Tq, Tk).
    const Tensor* key_padding = nullptr;
};

// Masked scores get probability exactly 0. A row whose visible keys are all padding follows HF's
// finfo.min arithmetic: uniform over the keys hidden by exactly one mask (all keys without the
// causal mask).
Var softmax(const Var& x, const SoftmaxMask& mask = {});

}  // namespace remat::ops
