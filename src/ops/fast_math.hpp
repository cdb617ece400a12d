#pragma once
// Branch-free exp and tanh in float that the compiler can vectorise (std::exp is a scalar library
// call per element). Accuracy: exp within ~2 ulp over [-87, 88] (Cephes' polynomial); below -87.3 it
// returns 0, as the softmax and cross-entropy kernels want for masked or negligible terms.
#include <cstdint>
#include <cstring>

namespace remat::ops::detail {

inline float fast_exp(float x) {
    constexpr float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const float clamped = x < -87.3f ? -87.3f : (x > 88.7f ? 88.7f : x);
    // Round to nearest by the 1.5·2²³ trick: no libm call, so the loop vectorises on any target.
    constexpr float round_magic = 12582912.0f;
    const float shifted = clamped * log2e + round_magic;  // n in the low bits of its mantissa
    const float n = shifted - round_magic;
    const float r = clamped - n * ln2_hi - n * ln2_lo;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float y = p * r * r + r + 1.0f;
    // 2^n built from shifted's bits (1.5·2²³ + n): no float-to-int conversion, which would be undefined
    // for a NaN x (whose result stays NaN through r).
    std::uint32_t shifted_bits;
    std::memcpy(&shifted_bits, &shifted, 4);
    const std::uint32_t bits = (shifted_bits - 0x4B400000u + 127u) << 23;
    float scale;
    std::memcpy(&scale, &bits, 4);
    return x < -87.3f ? 0.0f : y * scale;
}

// tanh(u) = 1 − 2 / (exp(2u) + 1), with u clamped where tanh is ±1 in float.
inline float fast_tanh(float u) {
    const float c = u < -9.0f ? -9.0f : (u > 9.0f ? 9.0f : u);
    return 1.0f - 2.0f / (fast_exp(2.0f * c) + 1.0f);
}

}  // namespace remat::ops::detail
