#pragma once
// Initialisers. Each returns a Tensor drawn from the given generator.
#include "remat/core/random.hpp"
#include "remat/core/tensor.hpp"

namespace remat::init {

// U(−a, a), a = √(6 / (fan_in + fan_out)); fan_in = shape[1], fan_out = shape[0] for (out, in).
Tensor glorot_uniform(const Shape& shape, Generator& rng);
// N(0, std²), as HF's initializer_range (0.02).
Tensor normal(const Shape& shape, float std, Generator& rng);
Tensor uniform(const Shape& shape, float low, float high, Generator& rng);

}  // namespace remat::init
