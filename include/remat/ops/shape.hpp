#pragma once
// Data movement: reshape, permute, slices and concatenation on the last axis.
#include <cstdint>
#include <vector>

#include "remat/ad/var.hpp"

namespace remat::ops {

// New shape with the same element count; one dimension may be -1 (inferred).
Var reshape(const Var& x, const std::vector<std::int64_t>& shape);
// Output axis i is input axis axes[i].
Var permute(const Var& x, const std::vector<std::size_t>& axes);
Var transpose(const Var& x, std::size_t axis0, std::size_t axis1);
// x[..., begin:end]
Var slice_last(const Var& x, std::size_t begin, std::size_t end);
// Consecutive pieces of the last axis with the given sizes (they must add up to it).
std::vector<Var> split_last(const Var& x, const std::vector<std::size_t>& sizes);
// Joins along the last axis; all other dims must agree.
Var concat_last(const std::vector<Var>& parts);

}  // namespace remat::ops
