#pragma once
// What every causal LM of the table does alike: check HF's attention_mask against the ids, and HF's
// loss (ForCausalLMLoss) — mean cross-entropy of logits[:, t] against labels[:, t + 1] over labels
// ≠ −100. `model` names the class in messages ("GPT2LMHeadModel loss: labels …").
#include <string>

#include "remat/ad/var.hpp"

namespace remat::models {

// Throws ShapeError unless the attention mask has the ids' shape.
void check_mask(const std::string& model, const IdTensor& ids, const IdTensor& attention_mask);

Var shifted_loss(const std::string& model, const Var& logits, const IdTensor& labels);

// hidden (B, T, C) -> its last position, (B, C): the only one whose logits generation needs. A constant
// (generation runs under no-grad).
Var last_position(const Var& hidden);

}  // namespace remat::models
