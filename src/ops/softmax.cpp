#include "remat/ops/softmax.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "common.hpp"
#include "kernels.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// Row r of scores (Tk keys) sees keys [first(r), visible(r)) that its padding row marks 1.
struct RowMask {
    std::size_t Tq, Tk, rows_per_batch;
    bool causal;
    const float* keep;  // (B, Tk) or null
    std::size_t window;
    bool combined;
    const std::int64_t* key_start;  // (B, Tq) or null
};

REMAT_VECTOR_CLONES
void softmax_forward(const float* in, float* out, std::size_t rows, const RowMask& m) {
    constexpr float lowest = -std::numeric_limits<float>::infinity();
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = in + r * m.Tk;
        float* yr = out + r * m.Tk;
        // Keys from `visible` on are causally masked: probability 0, no exp computed for them.
        const std::size_t visible = m.causal ? r % m.Tq + 1 + (m.Tk - m.Tq) : m.Tk;
        std::size_t first = m.window && visible > m.window ? visible - m.window : 0;
        if (m.key_start)
            first = std::max(first, static_cast<std::size_t>(m.key_start[(r / m.rows_per_batch) * m.Tq + r % m.Tq]));
        const float* keep = m.keep ? m.keep + (r / m.rows_per_batch) * m.Tk : nullptr;
        for (std::size_t k = visible; k < m.Tk; ++k) yr[k] = 0.0f;
        if (keep)  // padding: -inf, whose exp is exactly 0
            for (std::size_t k = 0; k < visible; ++k) yr[k] = keep[k] != 0.0f ? xr[k] : lowest;
        else
            for (std::size_t k = 0; k < visible; ++k) yr[k] = xr[k];
        for (std::size_t k = 0; k < first; ++k) yr[k] = lowest;  // before the window or the row's sequence
        const float max = fixed_order_max(visible, yr);
        if (max == lowest && m.combined) {  // every score at finfo.min: uniform over all keys
            for (std::size_t k = 0; k < m.Tk; ++k) yr[k] = 1.0f / static_cast<float>(m.Tk);
            continue;
        }
        if (max == lowest) {
            // Every visible key is padding. HF's masks are finfo.min (causally hidden) plus finfo.min
            // (padding): a key hidden by one of them ends at min, by both at -inf. The row is then
            // uniform over the keys at min: the visible ones and the hidden ones that are not padding.
            std::size_t count = 0;
            for (std::size_t k = 0; k < m.Tk; ++k) {
                const bool at_min = k < visible || !keep || keep[k] != 0.0f;
                yr[k] = at_min ? 1.0f : 0.0f;
                count += at_min;
            }
            for (std::size_t k = 0; k < m.Tk; ++k) yr[k] /= static_cast<float>(count);
            continue;
        }
        for (std::size_t k = 0; k < visible; ++k) yr[k] = fast_exp(yr[k] - max);
        const float inv = 1.0f / fixed_order_sum(visible, [&](std::size_t k) { return yr[k]; });
        for (std::size_t k = 0; k < visible; ++k) yr[k] *= inv;
    }
}

REMAT_VECTOR_CLONES
void softmax_backward(const float* y, const float* dy, float* dx, std::size_t rows, std::size_t Tk) {
    // dx = y ⊙ (dy − Σ dy·y), row by row; masked entries have y = 0 and get nothing.
    for (std::size_t r = 0; r < rows; ++r) {
        const float* yr = y + r * Tk;
        const float* dyr = dy + r * Tk;
        float* dxr = dx + r * Tk;
        const float dot = fixed_order_sum(Tk, [&](std::size_t k) { return dyr[k] * yr[k]; });
        for (std::size_t k = 0; k < Tk; ++k) dxr[k] += yr[k] * (dyr[k] - dot);
    }
}
}  // namespace

void check_window(const SoftmaxMask& mask, const char* op) {
    if (mask.window && !(mask.causal && mask.combined))
        throw ShapeError(std::string(op) + ": a sliding window needs the causal mask and combined masks");
}

void check_key_start(const SoftmaxMask& mask, std::size_t B, std::size_t Tq, std::size_t Tk, const char* op) {
    if (!mask.key_start) return;
    const IdTensor& starts = *mask.key_start;
    if (!mask.causal) throw ShapeError(std::string(op) + ": key starts (packed sequences) need the causal mask");
    if (starts.dimension() != 2 || starts.shape()[0] != B || starts.shape()[1] != Tq)
        throw ShapeError(std::string(op) + ": key starts must be (batch, queries) = " + to_string(Shape{B, Tq}) + ", got " +
                         to_string(Shape(starts.shape().begin(), starts.shape().end())));
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < Tq; ++i) {
            const std::int64_t start = starts.data()[b * Tq + i];
            if (start < 0 || static_cast<std::size_t>(start) > i + (Tk - Tq))
                throw ShapeError(std::string(op) + ": key start " + std::to_string(start) + " of query " + std::to_string(i) +
                                 " in batch element " + std::to_string(b) + " is not one of the keys it sees");
        }
}

Var softmax(const Var& x, const SoftmaxMask& mask) {
    const Shape& s = x.shape();
    require_rank_at_least("softmax", x, 1);
    check_window(mask, "softmax");
    const std::size_t Tk = s.back(), rows = leading_rows(s);
    const std::size_t Tq = s.size() >= 2 ? s[s.size() - 2] : 1;
    if (mask.causal) {
        require_rank_at_least("softmax (causal)", x, 2);
        if (Tq > Tk) throw ShapeError("softmax (causal): more queries than keys in scores " + to_string(s));
    }
    std::size_t rows_per_batch = rows;
    if (mask.key_start) {
        require_rank_at_least("softmax (key starts)", x, 3);
        check_key_start(mask, s[0], Tq, Tk, "softmax");
        rows_per_batch = s[0] ? rows / s[0] : 1;
    }
    if (mask.key_padding) {
        const Tensor& m = *mask.key_padding;
        require_rank_at_least("softmax (padding)", x, 3);
        if (m.dimension() != 2 || m.shape()[0] != s[0] || m.shape()[1] != Tk)
            throw ShapeError("softmax: key padding mask must be (batch, keys) = " + to_string(Shape{s[0], Tk}) +
                             ", got " + to_string(m.shape()));
        rows_per_batch = s[0] ? rows / s[0] : 1;
    }
    Tensor y = empty(s);
    if (Tk > 0)
        softmax_forward(x.value().data(), y.data(), rows,
                        {Tq, Tk, rows_per_batch, mask.causal, mask.key_padding ? mask.key_padding->data() : nullptr,
                         mask.window, mask.combined, mask.key_start ? mask.key_start->data() : nullptr});
    if (!ad::should_record(x)) return Var(std::move(y));
    auto yv = share(std::move(y));
    return ad::record(ad::OpKind::softmax, yv, {x}, [yv, rows, Tk](const Tensor& dy, ad::Grads& g) {
        softmax_backward(yv->data(), dy.data(), g[0].data(), rows, Tk);
    });
}

}  // namespace remat::ops
