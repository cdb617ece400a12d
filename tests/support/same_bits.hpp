#pragma once
// Bit equality, the test of every "bitwise identical" promise: memcmp, so -0 differs from +0 and a
// NaN equals the same NaN.
#include <cstddef>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

#include "remat/core/tensor.hpp"

namespace remat::test {

// The same bytes, and as many.
inline bool same_bits(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}
inline std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }
inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
// The same shape and the same floats, bit for bit.
inline bool same_bits(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && same_bits(std::as_bytes(std::span(a.data(), a.size())), std::as_bytes(std::span(b.data(), b.size())));
}

}  // namespace remat::test
