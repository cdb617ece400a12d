#include "remat/ops/shape.hpp"

#include <algorithm>
#include <numeric>

#include "broadcast.hpp"
#include "common.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// Records an op that only moves data: the gradient moves back the opposite way.
Var record_movement(Tensor y, const Var& x, std::function<void(const Tensor& dy, Tensor& dx)> back) {
    if (!ad::should_record(x)) return Var(std::move(y));
    return ad::record(ad::OpKind::shape, share(std::move(y)), {x},
                      [back = std::move(back)](const Tensor& dy, ad::Grads& g) { back(dy, g[0]); });
}

// dst (shape `to`) gets src permuted: dst axis i is src axis axes[i]. Adds when accumulate.
void permute_into(const Tensor& src, const std::vector<std::size_t>& axes, float* dst, bool accumulate) {
    const Shape& s = src.shape();
    Shape to(axes.size());
    std::vector<std::size_t> src_strides(s.size());
    for (std::size_t i = s.size(), stride = 1; i-- > 0; stride *= s[i]) src_strides[i] = stride;
    std::vector<std::size_t> read(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) {
        to[i] = s[axes[i]];
        read[i] = src_strides[axes[i]];
    }
    const std::vector<std::size_t> none(axes.size(), 0);
    const float* in = src.data();
    for_each_broadcast(to, read, none, [&](std::size_t flat, std::size_t o, std::size_t) {
        dst[flat] = accumulate ? dst[flat] + in[o] : in[o];
    });
}
}  // namespace

Var reshape(const Var& x, const std::vector<std::int64_t>& shape) {
    Shape to(shape.size());
    std::size_t known = 1, inferred = shape.size();
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1 && inferred == shape.size()) {
            inferred = i;
        } else if (shape[i] < 0) {
            throw ShapeError("reshape: invalid target dimension " + std::to_string(shape[i]) + " for " + to_string(x.shape()));
        } else {
            to[i] = static_cast<std::size_t>(shape[i]);
            known *= to[i];
        }
    }
    if (inferred != shape.size()) to[inferred] = known == 0 ? 0 : x.size() / known;
    if (element_count(to) != x.size())
        throw ShapeError("reshape: cannot view " + to_string(x.shape()) + " as " + to_string(to));
    Tensor y = empty(to);
    std::copy(x.value().data(), x.value().data() + x.size(), y.data());
    return record_movement(std::move(y), x, [](const Tensor& dy, Tensor& dx) {
        for (std::size_t i = 0, n = dy.size(); i < n; ++i) dx.data()[i] += dy.data()[i];
    });
}

Var permute(const Var& x, const std::vector<std::size_t>& axes) {
    std::vector<std::size_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> identity(x.dim());
    std::iota(identity.begin(), identity.end(), 0);
    if (sorted != identity) throw ShapeError("permute: axes are not a permutation of the " + std::to_string(x.dim()) + " axes of " + to_string(x.shape()));
    Shape to(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) to[i] = x.shape()[axes[i]];
    Tensor y = empty(to);
    permute_into(x.value(), axes, y.data(), false);
    std::vector<std::size_t> inverse(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) inverse[axes[i]] = i;
    return record_movement(std::move(y), x, [inverse](const Tensor& dy, Tensor& dx) { permute_into(dy, inverse, dx.data(), true); });
}

Var transpose(const Var& x, std::size_t axis0, std::size_t axis1) {
    if (axis0 >= x.dim() || axis1 >= x.dim())
        throw ShapeError("transpose: axes " + std::to_string(axis0) + ", " + std::to_string(axis1) + " out of range for " + to_string(x.shape()));
    std::vector<std::size_t> axes(x.dim());
    std::iota(axes.begin(), axes.end(), 0);
    std::swap(axes[axis0], axes[axis1]);
    return permute(x, axes);
}

Var slice_last(const Var& x, std::size_t begin, std::size_t end) {
    require_rank_at_least("slice_last", x, 1);
    const std::size_t C = x.shape().back(), rows = leading_rows(x.shape());
    if (begin > end || end > C)
        throw ShapeError("slice_last: range [" + std::to_string(begin) + ", " + std::to_string(end) + ") outside last axis of " + to_string(x.shape()));
    const std::size_t W = end - begin;
    Shape to = x.shape();
    to.back() = W;
    Tensor y = empty(to);
    for (std::size_t r = 0; r < rows; ++r) {
        const float* src = x.value().data() + r * C + begin;
        std::copy(src, src + W, y.data() + r * W);
    }
    return record_movement(std::move(y), x, [rows, C, W, begin](const Tensor& dy, Tensor& dx) {
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < W; ++c) dx.data()[r * C + begin + c] += dy.data()[r * W + c];
    });
}

std::vector<Var> split_last(const Var& x, const std::vector<std::size_t>& sizes) {
    require_rank_at_least("split_last", x, 1);
    if (std::accumulate(sizes.begin(), sizes.end(), std::size_t{0}) != x.shape().back())
        throw ShapeError("split_last: sizes do not add up to the last axis of " + to_string(x.shape()));
    std::vector<Var> parts;
    std::size_t begin = 0;
    for (std::size_t size : sizes) {
        parts.push_back(slice_last(x, begin, begin + size));
        begin += size;
    }
    return parts;
}

Var concat_last(const std::vector<Var>& parts) {
    if (parts.empty()) throw ShapeError("concat_last: nothing to concatenate");
    require_rank_at_least("concat_last", parts[0], 1);
    Shape to = parts[0].shape();
    std::size_t total = 0;
    std::vector<std::size_t> widths;
    for (const Var& p : parts) {
        Shape expected = to;
        expected.back() = p.dim() ? p.shape().back() : 0;
        check_shape("concat_last: part", expected, p.shape());
        widths.push_back(p.shape().back());
        total += p.shape().back();
    }
    to.back() = total;
    const std::size_t rows = leading_rows(to);
    Tensor y = empty(to);
    for (std::size_t r = 0, offset = 0; r < rows; ++r, offset = 0)
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const float* src = parts[i].value().data() + r * widths[i];
            std::copy(src, src + widths[i], y.data() + r * total + offset);
            offset += widths[i];
        }
    bool any = false;
    for (const Var& p : parts) any = any || p.requires_grad();
    if (!any || !ad::current().recording()) return Var(std::move(y));
    return ad::record(ad::OpKind::shape, share(std::move(y)), parts, [widths, rows, total](const Tensor& dy, ad::Grads& g) {
        for (std::size_t i = 0, offset = 0; i < widths.size(); offset += widths[i], ++i) {
            if (!g.wants(i)) continue;
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t c = 0; c < widths[i]; ++c) g[i].data()[r * widths[i] + c] += dy.data()[r * total + offset + c];
        }
    });
}

}  // namespace remat::ops
