#pragma once
// A tensor as a constant Var: an input no gradient flows into.
#include <memory>

#include "remat/ad/var.hpp"

namespace remat::test {

inline Var constant(const Tensor& t) { return Var(std::make_shared<const Tensor>(t)); }

}  // namespace remat::test
