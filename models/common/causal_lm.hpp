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

}  // namespace remat::models
