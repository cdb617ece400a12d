#pragma once
// A tensor of normal(0, std) values drawn from Generator(seed): the same for the same seed.
#include <cstdint>

#include "remat/core/random.hpp"
#include "remat/core/tensor.hpp"

namespace remat::test {

inline Tensor random_tensor(const Shape& shape, std::uint64_t seed, float std = 1.0f) {
    Tensor t = empty(shape);
    Generator g(seed);
    g.fill_normal(t.data(), t.size(), 0.0f, std);
    return t;
}

}  // namespace remat::test
