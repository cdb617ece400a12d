#pragma once
// Reading little-endian checkpoint bytes as float32 (private to src/hf): shared by the safetensors
// and pytorch_model.bin readers.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "remat/core/bfloat16.hpp"

namespace remat::hf::detail {

// A tensor (Tensor or IdTensor) of a checkpoint's shape, to read its data into.
template <class Container>
Container shaped(const std::vector<std::size_t>& shape) {
    return Container::from_shape(typename Container::shape_type(shape.begin(), shape.end()));
}

template <class T>
T load(const std::byte* p) {  // checkpoint data has no alignment guarantee
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// IEEE half to float, exactly (every half is a float).
inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
    if (exponent == 0) {  // zero or subnormal: mantissa · 2^-24, exact in float
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
    }
    if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // ±inf, NaN keeps its payload
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));            // rebias 15 -> 127
}

// bfloat16 is the top half of a float.
inline float bfloat_to_float(std::uint16_t b) { return from_bfloat16(b); }

}  // namespace remat::hf::detail
