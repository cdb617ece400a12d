#pragma once
// Element-wise arithmetic with NumPy broadcasting; gradients are summed back over broadcast axes.
#include "remat/ad/var.hpp"

namespace remat::ops {

Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var scale(const Var& x, float factor);  // x · factor

}  // namespace remat::ops

namespace remat {
inline Var operator+(const Var& a, const Var& b) { return ops::add(a, b); }
inline Var operator-(const Var& a, const Var& b) { return ops::sub(a, b); }
inline Var operator*(const Var& a, const Var& b) { return ops::mul(a, b); }
inline Var operator*(const Var& x, float factor) { return ops::scale(x, factor); }
inline Var operator*(float factor, const Var& x) { return ops::scale(x, factor); }
}  // namespace remat
