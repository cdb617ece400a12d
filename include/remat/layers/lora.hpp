#pragma once
// LoRA: a low-rank update beside a frozen linear layer (Hu et al. 2021; HF PEFT's LoraLayer),
//
//   y = W x + b + s · B (A (dropout(x))),   A: (r, in), B: (out, r), s = alpha / r (alpha / √r: rsLoRA)
//
// held in a Linear's or Conv1D's `adapter` slot, which set_lora (remat/adapters/lora.hpp) fills for
// the layers it targets. The slot adds no path segment, so the matrices are named as PEFT names them:
// transformer.h.0.attn.c_attn.lora_A.weight. A and B are oriented as PEFT's (nn.Linear weights) for
// both layer kinds; only merging transposes for Conv1D's (in, out) weight (PEFT's fan_in_fan_out).
#include <string>

#include "remat/layers/dropout.hpp"
#include "remat/layers/layer.hpp"
#include "remat/ops/linalg.hpp"

namespace remat::nn {

// One factor's weight, as a bias-free nn.Linear holds it.
struct LoraMatrix {
    BOOST_HANA_DEFINE_STRUCT(LoraMatrix, (Param, weight));
    static constexpr const char* name = "LoraMatrix";
};

struct LoRA {
    BOOST_HANA_DEFINE_STRUCT(LoRA, (LoraMatrix, lora_A), (LoraMatrix, lora_B), (Dropout, lora_dropout),
                             (float, scaling));
    static constexpr const char* name = "LoRA";
    static constexpr bool flattened = true;  // its members' paths are the holding layer's

    std::size_t rank() const { return lora_A.weight.shape()[0]; }
    std::string describe() const;  // "LoRA(r=8, scaling=2)"
    // The update for input x (…, in), which the wrapped layer adds inside its product (ops::linear):
    // down = s · A (dropout(x)) (…, r) and up = B.
    ops::LowRank update(const Var& x) const;
};

}  // namespace remat::nn
