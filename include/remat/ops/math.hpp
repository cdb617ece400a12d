#pragma once
// Element-wise math on one input (same shape out). Outside the domain the result is IEEE's, as in
// torch: log(0) = −inf, log and sqrt of a negative are NaN; nothing throws.
#include "remat/ad/var.hpp"

namespace remat::ops {

Var exp(const Var& x);   // eˣ; d/dx = eˣ
Var log(const Var& x);   // ln x; d/dx = 1/x
Var sqrt(const Var& x);  // √x; d/dx = 1/(2√x)
// min(max(x, lo), hi); the gradient passes where lo ≤ x ≤ hi, both ends included (torch.clamp's
// rule). ±INFINITY leaves a side open. ValueError unless lo ≤ hi (torch instead returns hi).
Var clamp(const Var& x, float lo, float hi);

}  // namespace remat::ops
