#pragma once
// Helpers shared by op implementations (private to src/).
#include <cstdint>
#include <memory>
#include <string>

#include "remat/ad/backend.hpp"
#include "remat/core/error.hpp"

namespace remat::ops::detail {

using ad::share;

// Product of all dims but the last: the number of rows when the last axis is the feature axis.
inline std::size_t leading_rows(const Shape& s) {
    std::size_t n = 1;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) n *= s[i];
    return n;
}
inline std::size_t last_dim(const Shape& s) { return s.empty() ? 1 : s.back(); }

// The dropout keep rule: an element is kept when its 32 random bits, read as a uniform float in
// [0, 1) from their top 24 bits, are at least p. ops::dropout and the fused attention's dropout both
// call it, so their masks agree bit for bit.
inline bool dropout_keeps(std::uint32_t bits, float p) { return static_cast<float>(bits >> 8) * 0x1p-24f >= p; }

inline void require_rank_at_least(const char* op, const Var& x, std::size_t rank) {
    if (x.dim() < rank)
        throw ShapeError(std::string(op) + ": expected at least " + std::to_string(rank) + " dimensions, got shape " +
                         to_string(x.shape()));
}

// Records y = f(x) for a same-shape element-wise f; accumulate(x, y, dy, dx) adds dy · f'(x) into dx.
template <class Accumulate>
Var record_unary(ad::OpKind kind, Tensor y, const Var& x, Accumulate accumulate) {
    if (!ad::should_record(x)) return Var(std::move(y));
    auto xv = x.shared_value();
    auto yv = share(std::move(y));
    return ad::record(kind, yv, {x}, [xv, yv, accumulate](const Tensor& dy, ad::Grads& g) { accumulate(*xv, *yv, dy, g[0]); });
}

// Selective checkpointing: the output the region's forward kept for this op, or a fresh one.
template <class Compute>
std::shared_ptr<const Tensor> kept_or_compute(ad::OpKind kind, const Shape& shape, Compute&& compute) {
    ad::Backend& backend = ad::current();
    if (auto kept = backend.reuse(kind)) {
        check_shape(std::string("recomputation of a kept ") + std::string(ad::name(kind)) + " output", shape, kept->shape());
        return kept;
    }
    auto out = share(compute());
    backend.keep(kind, out);
    return out;
}

}  // namespace remat::ops::detail
