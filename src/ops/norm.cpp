#include "remat/ops/norm.hpp"

#include <cmath>

#include "common.hpp"

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
        float mean = 0.0f;
        for (std::size_t c = 0; c < C; ++c) mean += xr[c];
        mean /= static_cast<float>(C);
        float var = 0.0f;
        for (std::size_t c = 0; c < C; ++c) var += (xr[c] - mean) * (xr[c] - mean);
        var /= static_cast<float>(C);
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
                          for (std::size_t r = 0; r < rows; ++r) {
                              const float* xr = xv->data() + r * C;
                              const float* dyr = dy.data() + r * C;
                              const float mean = (*stats)(r, 0), rstd = (*stats)(r, 1);
                              // dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), dx̂ = dy · gamma
                              float mean_dxhat = 0.0f, mean_dxhat_xhat = 0.0f;
                              for (std::size_t c = 0; c < C; ++c) {
                                  const float xhat = (xr[c] - mean) * rstd;
                                  const float dxhat = dyr[c] * wv->data()[c];
                                  mean_dxhat += dxhat;
                                  mean_dxhat_xhat += dxhat * xhat;
                              }
                              mean_dxhat /= static_cast<float>(C);
                              mean_dxhat_xhat /= static_cast<float>(C);
                              for (std::size_t c = 0; c < C; ++c) {
                                  const float xhat = (xr[c] - mean) * rstd;
                                  if (g.wants(0)) {
                                      const float dxhat = dyr[c] * wv->data()[c];
                                      g[0].data()[r * C + c] += rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
                                  }
                                  if (g.wants(1)) g[1].data()[c] += dyr[c] * xhat;
                                  if (g.wants(2)) g[2].data()[c] += dyr[c];
                              }
                          }
                      });
}

}  // namespace remat::ops
