#pragma once
#include "remat/ad/var.hpp"

namespace remat::ops {

// Layer norm over the last axis: y = (x − mean) / √(var + eps) · gamma + beta, var biased (÷C).
// x (..., C), gamma (C,), beta (C,).
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps);

}  // namespace remat::ops
