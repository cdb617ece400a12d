#pragma once
#include <cstdint>

#include "remat/ad/var.hpp"

namespace remat::ops {

// Sum and mean of all elements, as a 0-d tensor (summed in double, in index order).
Var sum(const Var& x);
Var mean(const Var& x);

// Over one axis (negative counts from the end, as in PyTorch), which is removed, or kept with size 1
// when keepdim. Sums run in double along the axis in index order. ShapeError for an axis outside
// [−rank, rank); mean and max of an empty axis are a ValueError.
Var sum(const Var& x, std::int64_t axis, bool keepdim = false);
Var mean(const Var& x, std::int64_t axis, bool keepdim = false);
// The largest value along the axis (NaN if any is NaN). Its gradient goes to the first maximal
// element (the first NaN), the index torch.max(x, dim) returns.
Var max(const Var& x, std::int64_t axis, bool keepdim = false);

}  // namespace remat::ops
