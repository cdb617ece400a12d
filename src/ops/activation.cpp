#include "remat/ops/activation.hpp"

#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float gelu_cubic = 0.044715f;
constexpr float inv_sqrt_2 = 0.7071067811865476f;
constexpr float inv_sqrt_2pi = 0.3989422804014327f;

template <class Accumulate>
Var unary(Tensor y, const Var& x, Accumulate accumulate) {
    return record_unary(ad::OpKind::activation, std::move(y), x, std::move(accumulate));
}
}  // namespace

namespace {
REMAT_VECTOR_CLONES
void gelu_tanh_forward(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + fast_tanh(sqrt_2_over_pi * (v + gelu_cubic * v * v * v)));
    }
}

REMAT_VECTOR_CLONES
void gelu_tanh_backward(const float* x, const float* dy, float* dx, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        const float t = fast_tanh(sqrt_2_over_pi * (v + gelu_cubic * v * v * v));
        dx[i] += dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * sqrt_2_over_pi * (1.0f + 3.0f * gelu_cubic * v * v));
    }
}
}  // namespace

Var gelu_tanh(const Var& x) {
    Tensor y = empty(x.shape());
    const float* in = x.value().data();
    float* out = y.data();
    parallel_ranges(y.size(), elementwise_grain,
                    [&](std::size_t b, std::size_t e) { gelu_tanh_forward(in + b, out + b, e - b); });
    return unary(std::move(y), x, [](const Tensor& v, const Tensor&, const Tensor& dy, Tensor& dx) {
        parallel_ranges(v.size(), elementwise_grain, [&](std::size_t b, std::size_t e) {
            gelu_tanh_backward(v.data() + b, dy.data() + b, dx.data() + b, e - b);
        });
    });
}

Var gelu_erf(const Var& x) {
    const Tensor& v = x.value();
    Tensor y = 0.5f * v * (1.0f + xt::erf(v * inv_sqrt_2));
    return unary(std::move(y), x, [](const Tensor& v, const Tensor&, const Tensor& dy, Tensor& dx) {
        xt::noalias(dx) += dy * (0.5f * (1.0f + xt::erf(v * inv_sqrt_2)) + v * inv_sqrt_2pi * xt::exp(-0.5f * v * v));
    });
}

Var relu(const Var& x) {
    Tensor y = xt::maximum(x.value(), 0.0f);
    return unary(std::move(y), x, [](const Tensor& v, const Tensor&, const Tensor& dy, Tensor& dx) {
        xt::noalias(dx) += xt::where(v > 0.0f, dy, 0.0f);
    });
}

Var tanh(const Var& x) {
    Tensor y = xt::tanh(x.value());
    return unary(std::move(y), x, [](const Tensor&, const Tensor& y, const Tensor& dy, Tensor& dx) {
        xt::noalias(dx) += dy * (1.0f - y * y);
    });
}

Var sigmoid(const Var& x) {
    Tensor y = 1.0f / (1.0f + xt::exp(-x.value()));
    return unary(std::move(y), x, [](const Tensor&, const Tensor& y, const Tensor& dy, Tensor& dx) {
        xt::noalias(dx) += dy * (1.0f - y) * y;
    });
}

}  // namespace remat::ops
