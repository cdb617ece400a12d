#pragma once
#include "remat/ad/var.hpp"
#include "remat/core/random.hpp"

namespace remat::ops {

// Zeroes each element with probability p and scales the rest by 1/(1 − p). The mask comes from
// `generator` (advanced by ceil(size/4) blocks); backward regenerates it from the 16-byte state
// instead of storing it. p outside [0, 1] throws ValueError; p = 0 returns x unchanged.
Var dropout(const Var& x, float p, Generator& generator);

}  // namespace remat::ops
