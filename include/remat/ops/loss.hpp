#pragma once
#include <cstdint>

#include "remat/ad/var.hpp"

namespace remat::ops {

// Mean cross-entropy of logits (..., V) against targets (...) over the targets ≠ ignore_index
// (PyTorch's F.cross_entropy). A 0-d result. Targets outside [0, V), shapes that disagree, and a
// batch where every target is ignored throw.
Var cross_entropy(const Var& logits, const IdTensor& targets, std::int64_t ignore_index = -100);

// A causal LM's loss, as HF's *ForCausalLM compute it: the mean cross-entropy of logits[:, t] (B, T, V)
// against labels[:, t + 1] (B, T) over labels ≠ ignore_index; the last position predicts nothing.
// ShapeError "next-token cross-entropy: labels … do not match logits …".
Var next_token_cross_entropy(const Var& logits, const IdTensor& labels, std::int64_t ignore_index = -100);

// Mean squared error, a 0-d result; shapes must be equal.
Var mse(const Var& prediction, const Var& target);

}  // namespace remat::ops
