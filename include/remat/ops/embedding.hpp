#pragma once
#include "remat/ad/var.hpp"

namespace remat::ops {

// Rows of weight (V, C) picked by ids (...) -> (..., C). Ids outside [0, V) throw ValueError.
// The gradient scatter-adds into weight's rows, so repeated ids accumulate.
Var embedding(const Var& weight, const IdTensor& ids);

}  // namespace remat::ops
