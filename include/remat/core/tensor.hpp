#pragma once
// The one tensor type: an xtensor container of float32 whose storage is counted by the memory tracker.
// Never store a default-allocator container (xt::xarray<float>, or the result of xt::eval): it escapes
// the tracker. Assigning an xtensor expression to a Tensor is fine — the Tensor's allocator is used.
#ifndef XTENSOR_USE_XSIMD
#define XTENSOR_USE_XSIMD
#endif
#include <cstdint>
#include <string>
#include <vector>
#include <xtensor/xarray.hpp>

#include "remat/core/memory.hpp"

namespace remat {

using Tensor = xt::xarray<float, xt::layout_type::row_major, memory::TrackingAllocator<float>>;
// Token ids, targets and other integer data.
using IdTensor = xt::xarray<std::int64_t, xt::layout_type::row_major, memory::TrackingAllocator<std::int64_t>>;
using Shape = Tensor::shape_type;

// "(2, 3, 4)"
std::string to_string(const Shape& shape);
std::string to_string(const std::vector<std::size_t>& shape);

// An uninitialised tensor of the given shape.
inline Tensor empty(const Shape& shape) { return Tensor::from_shape(shape); }
inline Tensor zeros(const Shape& shape) { return Tensor(shape, 0.0f); }
inline Tensor full(const Shape& shape, float value) { return Tensor(shape, value); }
std::size_t element_count(const Shape& shape);

}  // namespace remat
