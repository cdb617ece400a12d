#include "remat/train/optimisers.hpp"

#include <cmath>

namespace remat::train {

void apply(const SGD& r, std::int64_t, float* p, const float* g, float* const* moments, std::size_t n) {
    float* v = moments[0];
    for (std::size_t i = 0; i < n; ++i) {
        const float grad = g[i] + r.weight_decay * p[i];
        v[i] = r.momentum * v[i] + grad;
        p[i] -= r.lr * (r.momentum != 0.0f ? v[i] : grad);
    }
}

namespace {
void adam_step(float lr, float beta1, float beta2, float eps, float l2, std::int64_t step, float* p, const float* g,
               float* const* moments, std::size_t n) {
    float *m = moments[0], *v = moments[1];
    const auto t = static_cast<double>(step);
    const float correction1 = static_cast<float>(1.0 - std::pow(beta1, t));
    const float correction2 = static_cast<float>(1.0 - std::pow(beta2, t));
    const float step_size = lr / correction1;
    const float sqrt_correction2 = std::sqrt(correction2);
    for (std::size_t i = 0; i < n; ++i) {
        const float grad = g[i] + l2 * p[i];
        m[i] = beta1 * m[i] + (1 - beta1) * grad;
        v[i] = beta2 * v[i] + (1 - beta2) * grad * grad;
        p[i] -= step_size * m[i] / (std::sqrt(v[i]) / sqrt_correction2 + eps);
    }
}
}  // namespace

void apply(const Adam& r, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n) {
    adam_step(r.lr, r.beta1, r.beta2, r.eps, r.weight_decay, step, p, g, moments, n);
}

void apply(const AdamW& r, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) p[i] *= 1 - r.lr * r.weight_decay;
    adam_step(r.lr, r.beta1, r.beta2, r.eps, 0.0f, step, p, g, moments, n);
}

}  // namespace remat::train
