#include "remat/ops/loss.hpp"

#include <cmath>

#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// lse[i] = log Σ_v exp(x[i, v]) for each of the N rows of V logits.
REMAT_VECTOR_CLONES
void log_sum_exp_rows(const float* x, float* lse, std::size_t N, std::size_t V) {
    for (std::size_t i = 0; i < N; ++i) {
        const float* row = x + i * V;
        const float max = fixed_order_max(V, row);
        const float sum = fixed_order_sum(V, [&](std::size_t v) { return fast_exp(row[v] - max); });
        lse[i] = max + std::log(sum);
    }
}

// d += exp(row − lse) · scale: the softmax of a row, scaled.
REMAT_VECTOR_CLONES
void softmax_row_into(const float* row, float* d, std::size_t V, float lse, float scale) {
    for (std::size_t v = 0; v < V; ++v) d[v] += fast_exp(row[v] - lse) * scale;
}
}  // namespace

Var cross_entropy(const Var& logits, const IdTensor& targets, std::int64_t ignore_index) {
    require_rank_at_least("cross_entropy", logits, 1);
    const std::size_t V = logits.shape().back(), N = leading_rows(logits.shape());
    const Shape leading(logits.shape().begin(), logits.shape().end() - 1);
    if (Shape(targets.shape().begin(), targets.shape().end()) != leading)
        throw ShapeError("cross_entropy: targets " + to_string(Shape(targets.shape().begin(), targets.shape().end())) +
                         " do not match logits " + to_string(logits.shape()) + " without the class axis");
    if (N == 0) throw ValueError("cross_entropy: empty batch " + to_string(logits.shape()));
    std::size_t counted = 0;
    for (std::size_t i = 0; i < N; ++i) {
        const std::int64_t t = targets.data()[i];
        if (t == ignore_index) continue;
        if (t < 0 || static_cast<std::size_t>(t) >= V)
            throw ValueError("cross_entropy: target " + std::to_string(t) + " at position " + std::to_string(i) +
                             " is out of range for " + std::to_string(V) + " classes");
        ++counted;
    }
    if (counted == 0)
        throw ValueError("cross_entropy: every target equals ignore_index (" + std::to_string(ignore_index) +
                         "); there is nothing to average");
    // loss_i = logsumexp(x_i) − x_i[t_i]; keep logsumexp per row for backward.
    Tensor lse = empty(Shape{N});
    double total = 0.0;
    const float* x = logits.value().data();
    parallel_ranges(N, rows_grain(V), [&](std::size_t b, std::size_t e) { log_sum_exp_rows(x + b * V, lse.data() + b, e - b, V); });
    for (std::size_t i = 0; i < N; ++i) {
        const std::int64_t t = targets.data()[i];
        if (t != ignore_index) total += static_cast<double>(lse(i)) - x[i * V + static_cast<std::size_t>(t)];
    }
    Tensor loss = full(Shape{}, static_cast<float>(total / static_cast<double>(counted)));
    if (!ad::should_record(logits)) return Var(std::move(loss));
    auto xv = logits.shared_value();
    auto saved = std::make_shared<const IdTensor>(targets);
    auto lse_v = share(std::move(lse));
    return ad::record(ad::OpKind::loss, share(std::move(loss)), {logits},
                      [xv, saved, lse_v, N, V, counted, ignore_index](const Tensor& dy, ad::Grads& g) {
                          // d/dx_i = (softmax(x_i) − onehot(t_i)) · dy / counted
                          const float scale = dy.data()[0] / static_cast<float>(counted);
                          parallel_ranges(N, rows_grain(V), [&](std::size_t b, std::size_t e) {
                              for (std::size_t i = b; i < e; ++i) {
                                  const std::int64_t t = saved->data()[i];
                                  if (t == ignore_index) continue;
                                  const float* row = xv->data() + i * V;
                                  float* d = g[0].data() + i * V;
                                  softmax_row_into(row, d, V, (*lse_v)(i), scale);
                                  d[t] -= scale;
                              }
                          });
                      });
}

Var mse(const Var& prediction, const Var& target) {
    check_shape("mse: target", prediction.shape(), target.shape());
    if (prediction.size() == 0) throw ValueError("mse: empty batch " + to_string(prediction.shape()));
    const std::size_t n = prediction.size();
    const float *p = prediction.value().data(), *t = target.value().data();
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) total += static_cast<double>(p[i] - t[i]) * (p[i] - t[i]);
    Tensor loss = full(Shape{}, static_cast<float>(total / static_cast<double>(n)));
    if (!ad::should_record(prediction, target)) return Var(std::move(loss));
    auto pv = prediction.shared_value(), tv = target.shared_value();
    return ad::record(ad::OpKind::loss, share(std::move(loss)), {prediction, target}, [pv, tv, n](const Tensor& dy, ad::Grads& g) {
        const float scale = 2.0f * dy.data()[0] / static_cast<float>(n);
        for (std::size_t i = 0; i < n; ++i) {
            const float diff = (pv->data()[i] - tv->data()[i]) * scale;
            if (g.wants(0)) g[0].data()[i] += diff;
            if (g.wants(1)) g[1].data()[i] -= diff;
        }
    });
}

Var next_token_cross_entropy(const Var& logits, const IdTensor& labels, std::int64_t ignore_index) {
    const Shape label_shape(labels.shape().begin(), labels.shape().end());
    if (logits.dim() != 3 || label_shape.size() != 2 || label_shape[0] != logits.shape()[0] ||
        label_shape[1] != logits.shape()[1])
        throw ShapeError("next-token cross-entropy: labels " + to_string(label_shape) + " do not match logits " +
                         to_string(logits.shape()));
    const std::size_t B = label_shape[0], T = label_shape[1];
    IdTensor targets = IdTensor::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t t = 0; t + 1 < T; ++t) targets(b, t) = labels(b, t + 1);
        targets(b, T - 1) = ignore_index;
    }
    return cross_entropy(logits, targets, ignore_index);
}

}  // namespace remat::ops
