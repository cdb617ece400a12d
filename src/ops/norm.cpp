#include "remat/ops/norm.hpp"

#include <cmath>
#include <xtensor/xview.hpp>

#include "common.hpp"
#include "kernels.hpp"

namespace remat::ops {
using namespace detail;

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
    require_rank_at_least("layer_norm", x, 1);
    const std::size_t C = x.shape().back(), rows = leading_rows(x.shape());
    check_shape("layer_norm: gamma", Shape{C}, gamma.shape());
    check_shape("layer_norm: beta", Shape{C}, beta.shape());
    Tensor y = empty(x.shape());
    Tensor mean_rstd = empty(Shape{rows, 2});  // (rows, 2): per-row mean and 1/std, kept for backward
    const float *in = x.value().data(), *w = gamma.value().data(), *b = beta.value().data();
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = in + r * C;
        float* yr = y.data() + r * C;
        const float mean = fixed_order_sum(C, [&](std::size_t c) { return xr[c]; }) / static_cast<float>(C);
        const float var =
            fixed_order_sum(C, [&](std::size_t c) { return (xr[c] - mean) * (xr[c] - mean); }) / static_cast<float>(C);
        const float rstd = 1.0f / std::sqrt(var + eps);
        for (std::size_t c = 0; c < C; ++c) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
        mean_rstd(r, 0) = mean;
        mean_rstd(r, 1) = rstd;
    }
    if (!ad::should_record(x, gamma, beta)) return Var(std::move(y));
    auto xv = x.shared_value(), wv = gamma.shared_value();
    auto stats = share(std::move(mean_rstd));
    return ad::record(ad::OpKind::norm, share(std::move(y)), {x, gamma, beta},
                      [xv, wv, stats, rows, C](const Tensor& dy, ad::Grads& g) {
                          const float* w = wv->data();
                          float* dx = g.wants(0) ? g[0].data() : nullptr;
                          float* dgamma = g.wants(1) ? g[1].data() : nullptr;
                          float* dbeta = g.wants(2) ? g[2].data() : nullptr;
                          for (std::size_t r = 0; r < rows; ++r) {
                              const float* xr = xv->data() + r * C;
                              const float* dyr = dy.data() + r * C;
                              const float mean = (*stats)(r, 0), rstd = (*stats)(r, 1);
                              // dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), dx̂ = dy · gamma
                              const float mean_dxhat =
                                  fixed_order_sum(C, [&](std::size_t c) { return dyr[c] * w[c]; }) / static_cast<float>(C);
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
                              if (dgamma)
                                  for (std::size_t c = 0; c < C; ++c) dgamma[c] += dyr[c] * ((xr[c] - mean) * rstd);
                              if (dbeta)
                                  for (std::size_t c = 0; c < C; ++c) dbeta[c] += dyr[c];
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
