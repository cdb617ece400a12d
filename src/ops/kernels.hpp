#pragma once
// Shared building blocks of the row-wise kernels (private to src/).
#include <cstddef>

#include "fast_math.hpp"
#include "src/core/vector_clones.hpp"

namespace remat::ops::detail {

// Σ f(i) for i in [0, n) in 16 fixed partial sums combined in a fixed order: the same bits on every
// call, and a loop the compiler can vectorise (one running sum forces one add at a time).
template <class F>
inline float fixed_order_sum(std::size_t n, F&& f) {
    constexpr std::size_t L = 16;
    float part[L] = {};
    std::size_t i = 0;
    for (; i + L <= n; i += L)
        for (std::size_t l = 0; l < L; ++l) part[l] += f(i + l);
    for (; i < n; ++i) part[i % L] += f(i);
    for (std::size_t width = L / 2; width > 0; width /= 2)
        for (std::size_t l = 0; l < width; ++l) part[l] += part[l + width];
    return part[0];
}

// max of x[0, n) in 16 fixed partial maxima (-inf when n = 0), vectorisable like fixed_order_sum.
inline float fixed_order_max(std::size_t n, const float* x) {
    constexpr std::size_t L = 16;
    float part[L];
    for (std::size_t l = 0; l < L; ++l) part[l] = -__builtin_inff();
    std::size_t i = 0;
    for (; i + L <= n; i += L)
        for (std::size_t l = 0; l < L; ++l) part[l] = x[i + l] > part[l] ? x[i + l] : part[l];
    for (; i < n; ++i) part[i % L] = x[i] > part[i % L] ? x[i] : part[i % L];
    for (std::size_t width = L / 2; width > 0; width /= 2)
        for (std::size_t l = 0; l < width; ++l) part[l] = part[l + width] > part[l] ? part[l + width] : part[l];
    return part[0];
}

}  // namespace remat::ops::detail
