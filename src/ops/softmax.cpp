#include "remat/ops/softmax.hpp"

#include <cmath>
#include <limits>

#include "common.hpp"

namespace remat::ops {
using namespace detail;

Var softmax(const Var& x, const SoftmaxMask& mask) {
    const Shape& s = x.shape();
    require_rank_at_least("softmax", x, 1);
    const std::size_t Tk = s.back(), rows = leading_rows(s);
    const std::size_t Tq = s.size() >= 2 ? s[s.size() - 2] : 1;
    if (mask.causal) {
        require_rank_at_least("softmax (causal)", x, 2);
        if (Tq > Tk)
            throw ShapeError("softmax (causal): more queries than keys in scores " + to_string(s));
    }
    std::size_t rows_per_batch = rows;
    if (mask.key_padding) {
        const Tensor& m = *mask.key_padding;
        require_rank_at_least("softmax (padding)", x, 3);
        if (m.dimension() != 2 || m.shape()[0] != s[0] || m.shape()[1] != Tk)
            throw ShapeError("softmax: key padding mask must be (batch, keys) = " + to_string(Shape{s[0], Tk}) +
                             ", got " + to_string(m.shape()));
        rows_per_batch = rows / s[0];
    }
    const float* in = x.value().data();
    Tensor y = empty(s);
    float* out = y.data();
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = in + r * Tk;
        float* yr = out + r * Tk;
        // Keys [0, visible) pass the causal mask; padding masks individual keys.
        const std::size_t q = r % Tq;
        const std::size_t visible = mask.causal ? q + 1 + (Tk - Tq) : Tk;
        const float* keep = mask.key_padding ? mask.key_padding->data() + (r / rows_per_batch) * Tk : nullptr;
        auto allowed = [&](std::size_t k) { return k < visible && (!keep || keep[k] != 0.0f); };
        float max = -std::numeric_limits<float>::infinity();
        for (std::size_t k = 0; k < Tk; ++k)
            if (allowed(k)) max = std::max(max, xr[k]);
        if (max == -std::numeric_limits<float>::infinity()) {  // every key masked
            for (std::size_t k = 0; k < Tk; ++k) yr[k] = 1.0f / static_cast<float>(Tk);
            continue;
        }
        float total = 0.0f;
        for (std::size_t k = 0; k < Tk; ++k) {
            yr[k] = allowed(k) ? std::exp(xr[k] - max) : 0.0f;
            total += yr[k];
        }
        const float inv = 1.0f / total;
        for (std::size_t k = 0; k < Tk; ++k) yr[k] *= inv;
    }
    if (!ad::should_record(x)) return Var(std::move(y));
    auto yv = share(std::move(y));
    return ad::record(ad::OpKind::softmax, yv, {x}, [yv, rows, Tk](const Tensor& dy, ad::Grads& g) {
        // dx = y ⊙ (dy − Σ dy·y), row by row; masked entries have y = 0 and get nothing.
        for (std::size_t r = 0; r < rows; ++r) {
            const float* yr = yv->data() + r * Tk;
            const float* dyr = dy.data() + r * Tk;
            float* dxr = g[0].data() + r * Tk;
            float dot = 0.0f;
            for (std::size_t k = 0; k < Tk; ++k) dot += dyr[k] * yr[k];
            for (std::size_t k = 0; k < Tk; ++k) dxr[k] += yr[k] * (dyr[k] - dot);
        }
    });
}

}  // namespace remat::ops
