#pragma once
// Element-wise arithmetic with NumPy broadcasting; gradients are summed back over broadcast axes.
#include "remat/ad/var.hpp"

namespace remat::ops {

Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var scale(const Var& x, float factor);  // x · factor
// a / b; d/da = 1/b, d/db = −a/b² (IEEE: x/0 is ±inf, 0/0 NaN, no throw).
Var div(const Var& a, const Var& b);
// The larger (smaller) of a and b, NaN if either is NaN. On a tie each input gets half the gradient,
// as torch.maximum / torch.minimum give it; where either is NaN both get all of it (torch's rule too).
Var maximum(const Var& a, const Var& b);
Var minimum(const Var& a, const Var& b);
// condition ≠ 0 ? a : b, the three broadcast together (torch.where). The gradient goes to the chosen
// input only; condition is a constant (none flows into it, whether or not it requires one).
Var where(const Var& condition, const Var& a, const Var& b);

}  // namespace remat::ops

namespace remat {
inline Var operator+(const Var& a, const Var& b) { return ops::add(a, b); }
inline Var operator-(const Var& a, const Var& b) { return ops::sub(a, b); }
inline Var operator*(const Var& a, const Var& b) { return ops::mul(a, b); }
inline Var operator/(const Var& a, const Var& b) { return ops::div(a, b); }
inline Var operator*(const Var& x, float factor) { return ops::scale(x, factor); }
inline Var operator*(float factor, const Var& x) { return ops::scale(x, factor); }
}  // namespace remat
