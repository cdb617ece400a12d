#pragma once
#include "remat/ad/var.hpp"

namespace remat::ops {

// Sum and mean of all elements, as a 0-d tensor (summed in double, in index order).
Var sum(const Var& x);
Var mean(const Var& x);

}  // namespace remat::ops
