#include "remat/ops/norm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>
#include <xtensor/xview.hpp>

#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// Rows [begin, end) of layer norm: y and the per-row (mean, 1/std).
REMAT_VECTOR_CLONES
void layer_norm_rows(const float* in, const float* w, const float* b, float* out, float* mean_rstd, std::size_t C,
                     float eps, std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = in + r * C;
        float* yr = out + r * C;
        const float mean = fixed_order_sum(C, [&](std::size_t c) { return xr[c]; }) / static_cast<float>(C);
        const float var =
            fixed_order_sum(C, [&](std::size_t c) { return (xr[c] - mean) * (xr[c] - mean); }) / static_cast<float>(C);
        const float rstd = 1.0f / std::sqrt(var + eps);
        for (std::size_t c = 0; c < C; ++c) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
        mean_rstd[2 * r] = mean;
        mean_rstd[2 * r + 1] = rstd;
    }
}

// Backward over rows [begin, end): dx added in place; Σ dy·x̂ and Σ dy over these rows into
// sums (2, C), which the caller adds to dgamma and dbeta piece by piece in a fixed order.
REMAT_VECTOR_CLONES
void layer_norm_backward_rows(const float* x, const float* w, const float* mean_rstd, const float* dy, float* dx,
                              float* sums, std::size_t C, std::size_t begin, std::size_t end) {
    float* dgamma = sums;
    float* dbeta = sums + C;
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = x + r * C;
        const float* dyr = dy + r * C;
        const float mean = mean_rstd[2 * r], rstd = mean_rstd[2 * r + 1];
        // dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), dx̂ = dy · gamma
        const float mean_dxhat = fixed_order_sum(C, [&](std::size_t c) { return dyr[c] * w[c]; }) / static_cast<float>(C);
        const float mean_dxhat_xhat =
            fixed_order_sum(C, [&](std::size_t c) { return dyr[c] * w[c] * ((xr[c] - mean) * rstd); }) /
            static_cast<float>(C);
        if (dx) {
            float* dxr = dx + r * C;
            for (std::size_t c = 0; c < C; ++c) {
                const float xhat = (xr[c] - mean) * rstd;
                dxr[c] += rstd * (dyr[c] * w[c] - mean_dxhat - xhat * mean_dxhat_xhat);
            }
        }
        for (std::size_t c = 0; c < C; ++c) dgamma[c] += dyr[c] * ((xr[c] - mean) * rstd);
        for (std::size_t c = 0; c < C; ++c) dbeta[c] += dyr[c];
    }
}
}  // namespace

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
    require_rank_at_least("layer_norm", x, 1);
    const std::size_t C = x.shape().back(), rows = leading_rows(x.shape());
    check_shape("layer_norm: gamma", Shape{C}, gamma.shape());
    check_shape("layer_norm: beta", Shape{C}, beta.shape());
    Tensor y = empty(x.shape());
    Tensor mean_rstd = empty(Shape{rows, 2});  // (rows, 2): per-row mean and 1/std, kept for backward
    const float *in = x.value().data(), *w = gamma.value().data(), *b = beta.value().data();
    const std::size_t grain = rows_grain(C);
    parallel_ranges(rows, grain, [&](std::size_t begin, std::size_t end) {
        layer_norm_rows(in, w, b, y.data(), mean_rstd.data(), C, eps, begin, end);
    });
    if (!ad::should_record(x, gamma, beta)) return Var(std::move(y));
    auto xv = x.shared_value(), wv = gamma.shared_value();
    auto stats = share(std::move(mean_rstd));
    return ad::record(ad::OpKind::norm, share(std::move(y)), {x, gamma, beta},
                      [xv, wv, stats, rows, C, grain](const Tensor& dy, ad::Grads& g) {
                          // Rows in fixed pieces, each summing its own dgamma, dbeta; the pieces are
                          // then added in order: the same bits on any number of threads.
                          const std::size_t pieces = pieces_for(rows, grain);
                          std::vector<float> sums(pieces * 2 * C, 0.0f);  // (pieces, 2, C)
                          float* dx = g.wants(0) ? g[0].data() : nullptr;
                          parallel_for(pieces, [&](std::size_t p) {
                              layer_norm_backward_rows(xv->data(), wv->data(), stats->data(), dy.data(), dx,
                                                       sums.data() + p * 2 * C, C, p * grain,
                                                       std::min(rows, (p + 1) * grain));
                          });
                          for (std::size_t p = 0; p < pieces; ++p)
                              for (std::size_t i = 0; i < 2; ++i) {
                                  if (!g.wants(1 + i)) continue;
                                  float* into = g[1 + i].data();
                                  const float* from = sums.data() + (p * 2 + i) * C;
                                  for (std::size_t c = 0; c < C; ++c) into[c] += from[c];
                              }
                      });
}

}  // namespace remat::ops

namespace remat::ops {
using namespace detail;

Var batch_norm(const Var& x, const Var& gamma, const Var& beta, float eps, Tensor* batch_mean, Tensor* batch_var) {
    if (x.dim() != 2) throw ShapeError("batch_norm: expected input (N, C), got " + to_string(x.shape()));
    const std::size_t N = x.shape()[0], C = x.shape()[1];
    if (N < 2) throw ValueError("batch_norm: training needs more than one value per feature, got input " + to_string(x.shape()));
    check_shape("batch_norm: gamma", Shape{C}, gamma.shape());
    check_shape("batch_norm: beta", Shape{C}, beta.shape());
    const float* in = x.value().data();
    Tensor stats = zeros(Shape{2, C});  // (2, C): mean, then 1/std
    Tensor var = zeros(Shape{C});
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t c = 0; c < C; ++c) stats(0, c) += in[n * C + c];
    for (std::size_t c = 0; c < C; ++c) stats(0, c) /= static_cast<float>(N);
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t c = 0; c < C; ++c) {
            const float d = in[n * C + c] - stats(0, c);
            var(c) += d * d;
        }
    for (std::size_t c = 0; c < C; ++c) {
        var(c) /= static_cast<float>(N);
        stats(1, c) = 1.0f / std::sqrt(var(c) + eps);
    }
    Tensor y = empty(x.shape());
    const float *w = gamma.value().data(), *b = beta.value().data();
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t c = 0; c < C; ++c)
            y.data()[n * C + c] = (in[n * C + c] - stats(0, c)) * stats(1, c) * w[c] + b[c];
    if (batch_mean) *batch_mean = xt::view(stats, 0, xt::all());
    if (batch_var) *batch_var = var;
    if (!ad::should_record(x, gamma, beta)) return Var(std::move(y));
    auto xv = x.shared_value(), wv = gamma.shared_value();
    auto saved = share(std::move(stats));
    return ad::record(ad::OpKind::norm, share(std::move(y)), {x, gamma, beta},
                      [xv, wv, saved, N, C](const Tensor& dy, ad::Grads& g) {
                          // Per feature: dx = rstd/N · (N·dx̂ − Σdx̂ − x̂·Σ(dx̂·x̂)), dx̂ = dy · gamma
                          Tensor sums = zeros(Shape{2, C});  // Σdx̂, Σdx̂·x̂
                          const Tensor& s = *saved;
                          for (std::size_t n = 0; n < N; ++n)
                              for (std::size_t c = 0; c < C; ++c) {
                                  const float xhat = (xv->data()[n * C + c] - s(0, c)) * s(1, c);
                                  const float d = dy.data()[n * C + c];
                                  sums(0, c) += d * wv->data()[c];
                                  sums(1, c) += d * wv->data()[c] * xhat;
                                  if (g.wants(1)) g[1].data()[c] += d * xhat;
                                  if (g.wants(2)) g[2].data()[c] += d;
                              }
                          if (!g.wants(0)) return;
                          const float inv_n = 1.0f / static_cast<float>(N);
                          for (std::size_t n = 0; n < N; ++n)
                              for (std::size_t c = 0; c < C; ++c) {
                                  const float xhat = (xv->data()[n * C + c] - s(0, c)) * s(1, c);
                                  const float dxhat = dy.data()[n * C + c] * wv->data()[c];
                                  g[0].data()[n * C + c] +=
                                      s(1, c) * inv_n * (static_cast<float>(N) * dxhat - sums(0, c) - xhat * sums(1, c));
                              }
                      });
}

}  // namespace remat::ops
