#pragma once
// Bit equality, the test of every "bitwise identical" promise: memcmp, so -0 differs from +0 and a
// NaN equals the same NaN.
#include <cstddef>
#include <cstring>
#include <span>

#include "remat/core/tensor.hpp"

namespace remat::test {

// The same bytes, and as many.
inline bool same_bits(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}
inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
// The same shape and the same floats, bit for bit.
inline bool same_bits(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && same_bits(std::as_bytes(std::span(a.data(), a.size())), std::as_bytes(std::span(b.data(), b.size())));
}

}  // namespace remat::test
