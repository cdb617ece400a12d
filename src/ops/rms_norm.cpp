// RMS norm (norm.hpp): per row r = 1/√(mean(x²) + eps), y = weight · (x·r).
#include <algorithm>
#include <cmath>
#include <vector>

#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"
#include "remat/ops/norm.hpp"

namespace remat::ops {
using namespace detail;

namespace {
REMAT_VECTOR_CLONES
void rms_norm_rows(const float* in, const float* w, float* out, float* rstd, std::size_t C, float eps, std::size_t begin,
                   std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = in + r * C;
        float* yr = out + r * C;
        const float mean_square = fixed_order_sum(C, [&](std::size_t c) { return xr[c] * xr[c]; }) / static_cast<float>(C);
        const float inv = 1.0f / std::sqrt(mean_square + eps);
        for (std::size_t c = 0; c < C; ++c) yr[c] = w[c] * (xr[c] * inv);
        rstd[r] = inv;
    }
}

// dx = r · (dy·w − x̂ · mean(dy·w·x̂)) with x̂ = x·r, added in place; Σ dy·x̂ over the rows into dweight.
REMAT_VECTOR_CLONES
void rms_norm_backward_rows(const float* x, const float* w, const float* rstd, const float* dy, float* dx,
                            float* dweight, std::size_t C, std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = x + r * C;
        const float* dyr = dy + r * C;
        const float inv = rstd[r];
        if (dx) {
            const float mean_dxhat_xhat =
                fixed_order_sum(C, [&](std::size_t c) { return dyr[c] * w[c] * (xr[c] * inv); }) / static_cast<float>(C);
            float* dxr = dx + r * C;
            for (std::size_t c = 0; c < C; ++c) dxr[c] += inv * (dyr[c] * w[c] - xr[c] * inv * mean_dxhat_xhat);
        }
        if (dweight)
            for (std::size_t c = 0; c < C; ++c) dweight[c] += dyr[c] * (xr[c] * inv);
    }
}
}  // namespace

Var rms_norm(const Var& x, const Var& weight, float eps) {
    require_rank_at_least("rms_norm", x, 1);
    const std::size_t C = x.shape().back(), rows = leading_rows(x.shape());
    check_shape("rms_norm: weight", Shape{C}, weight.shape());
    Tensor y = empty(x.shape());
    Tensor rstd = empty(Shape{rows});  // per row 1/√(mean(x²) + eps), kept for backward
    const float *in = x.value().data(), *w = weight.value().data();
    const std::size_t grain = rows_grain(C);
    parallel_ranges(rows, grain, [&](std::size_t begin, std::size_t end) {
        rms_norm_rows(in, w, y.data(), rstd.data(), C, eps, begin, end);
    });
    if (!ad::should_record(x, weight)) return Var(std::move(y));
    auto xv = x.shared_value(), wv = weight.shared_value();
    auto saved = share(std::move(rstd));
    return ad::record(ad::OpKind::norm, share(std::move(y)), {x, weight},
                      [xv, wv, saved, rows, C, grain](const Tensor& dy, ad::Grads& g) {
                          // Fixed pieces of rows, each with its own dweight, added in order: the same
                          // bits on any number of threads.
                          const std::size_t pieces = pieces_for(rows, grain);
                          std::vector<float> sums(g.wants(1) ? pieces * C : 0, 0.0f);  // (pieces, C)
                          float* dx = g.wants(0) ? g[0].data() : nullptr;
                          parallel_for(pieces, [&](std::size_t p) {
                              rms_norm_backward_rows(xv->data(), wv->data(), saved->data(), dy.data(), dx,
                                                     sums.empty() ? nullptr : sums.data() + p * C, C, p * grain,
                                                     std::min(rows, (p + 1) * grain));
                          });
                          if (!g.wants(1)) return;
                          float* into = g[1].data();
                          for (std::size_t p = 0; p < pieces; ++p)
                              for (std::size_t c = 0; c < C; ++c) into[c] += sums[p * C + c];
                      });
}

}  // namespace remat::ops
