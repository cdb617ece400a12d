#include "remat/ops/reduce.hpp"

#include "common.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// s · Σ x, a 0-d tensor; dx += s · dy.
Var scaled_sum(const Var& x, double s) {
    double total = 0.0;
    for (float v : x.value()) total += v;
    Tensor y = full(Shape{}, static_cast<float>(total * s));
    if (!ad::should_record(x)) return Var(std::move(y));
    const auto factor = static_cast<float>(s);
    return ad::record(ad::OpKind::reduction, share(std::move(y)), {x}, [factor](const Tensor& dy, ad::Grads& g) {
        const float d = dy.data()[0] * factor;
        for (float& v : g[0]) v += d;
    });
}

// x read as (outer, n, inner) around the reduced axis; the output is (outer, inner) in that order.
struct AxisView {
    std::size_t outer = 1, n = 1, inner = 1;
    Shape out;
};

AxisView axis_view(const char* op, const Shape& s, std::int64_t axis, bool keepdim) {
    const auto rank = static_cast<std::int64_t>(s.size());
    if (axis < -rank || axis >= rank)
        throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(rank) + " (shape " + to_string(s) + ")");
    const auto a = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    AxisView v;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i < a) v.outer *= s[i];
        if (i > a) v.inner *= s[i];
        if (i != a) v.out.push_back(s[i]);
        else if (keepdim) v.out.push_back(1);
    }
    v.n = s[a];
    return v;
}

void require_nonempty(const char* op, const AxisView& v, const Var& x, std::int64_t axis) {
    if (v.n == 0)
        throw ValueError(std::string(op) + ": axis " + std::to_string(axis) + " of " + to_string(x.shape()) + " is empty");
}

// Columns of `inner` handled together: the accumulators of one tile live on the stack.
constexpr std::size_t tile = 256;

// y[o, i] = s · Σ_k x[o, k, i], each sum in double over k in order; dx[o, k, i] += factor · dy[o, i].
Var scaled_axis_sum(const Var& x, const AxisView& v, double s) {
    Tensor y = empty(v.out);
    const float* in = x.value().data();
    float* out = y.data();
    const std::size_t n = v.n, inner = v.inner;
    parallel_ranges(v.outer, rows_grain(n * inner), [&](std::size_t begin, std::size_t end) {
        double acc[tile];
        for (std::size_t o = begin; o < end; ++o)
            for (std::size_t i0 = 0; i0 < inner; i0 += tile) {
                const std::size_t w = inner - i0 < tile ? inner - i0 : tile;
                for (std::size_t i = 0; i < w; ++i) acc[i] = 0.0;
                for (std::size_t k = 0; k < n; ++k) {
                    const float* row = in + (o * n + k) * inner + i0;
                    for (std::size_t i = 0; i < w; ++i) acc[i] += row[i];
                }
                for (std::size_t i = 0; i < w; ++i) out[o * inner + i0 + i] = static_cast<float>(acc[i] * s);
            }
    });
    if (!ad::should_record(x)) return Var(std::move(y));
    const auto factor = static_cast<float>(s);
    return ad::record(ad::OpKind::reduction, share(std::move(y)), {x}, [v, factor](const Tensor& dy, ad::Grads& g) {
        const float* d = dy.data();
        float* dx = g[0].data();
        for (std::size_t o = 0; o < v.outer; ++o)
            for (std::size_t k = 0; k < v.n; ++k) {
                float* row = dx + (o * v.n + k) * v.inner;
                for (std::size_t i = 0; i < v.inner; ++i) row[i] += d[o * v.inner + i] * factor;
            }
    });
}
}  // namespace

Var sum(const Var& x) { return scaled_sum(x, 1.0); }

Var mean(const Var& x) {
    if (x.size() == 0) throw ValueError("mean: empty tensor " + to_string(x.shape()));
    return scaled_sum(x, 1.0 / static_cast<double>(x.size()));
}

Var sum(const Var& x, std::int64_t axis, bool keepdim) {
    return scaled_axis_sum(x, axis_view("sum", x.shape(), axis, keepdim), 1.0);
}

Var mean(const Var& x, std::int64_t axis, bool keepdim) {
    const AxisView v = axis_view("mean", x.shape(), axis, keepdim);
    require_nonempty("mean", v, x, axis);
    return scaled_axis_sum(x, v, 1.0 / static_cast<double>(v.n));
}

Var max(const Var& x, std::int64_t axis, bool keepdim) {
    const AxisView v = axis_view("max", x.shape(), axis, keepdim);
    require_nonempty("max", v, x, axis);
    Tensor y = empty(v.out);
    const float* in = x.value().data();
    float* out = y.data();
    const std::size_t n = v.n, inner = v.inner;
    parallel_ranges(v.outer, rows_grain(n * inner), [&](std::size_t begin, std::size_t end) {
        for (std::size_t o = begin; o < end; ++o) {
            float* best = out + o * inner;
            const float* first = in + o * n * inner;
            for (std::size_t i = 0; i < inner; ++i) best[i] = first[i];
            for (std::size_t k = 1; k < n; ++k) {
                const float* row = first + k * inner;
                // Strictly greater keeps the first maximum; the first NaN wins and stays.
                for (std::size_t i = 0; i < inner; ++i)
                    if (row[i] > best[i] || (row[i] != row[i] && best[i] == best[i])) best[i] = row[i];
            }
        }
    });
    if (!ad::should_record(x)) return Var(std::move(y));
    auto yv = share(std::move(y));
    // Backward finds the argmax again (the first k whose value is the maximum, or the first NaN when it
    // is NaN) rather than keeping indices: the forward rule picks exactly that element.
    return ad::record(ad::OpKind::reduction, yv, {x}, [v, xv = x.shared_value(), yv](const Tensor& dy, ad::Grads& g) {
        const float *in = xv->data(), *m = yv->data(), *d = dy.data();
        float* dx = g[0].data();
        for (std::size_t o = 0; o < v.outer; ++o)
            for (std::size_t i = 0; i < v.inner; ++i) {
                const float best = m[o * v.inner + i];
                std::size_t k = 0;
                for (; k + 1 < v.n; ++k) {
                    const float value = in[(o * v.n + k) * v.inner + i];
                    if (value == best || (best != best && value != value)) break;
                }
                dx[(o * v.n + k) * v.inner + i] += d[o * v.inner + i];
            }
    });
}

}  // namespace remat::ops
