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

namespace {
// σ(x) with the vectorisable exp; exact enough that silu' stays within float32 rounding.
inline float logistic(float v) { return 1.0f / (1.0f + fast_exp(-v)); }

REMAT_VECTOR_CLONES
void silu_forward(const float* x, const float* up, float* y, std::size_t n) {
    if (up)
        for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * logistic(x[i]) * up[i];
    else
        for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * logistic(x[i]);
}

// dx += dy·u·silu'(x) and, with up, du += dy·silu(x) (u = 1 without up).
REMAT_VECTOR_CLONES
void silu_backward(const float* x, const float* up, const float* dy, float* dx, float* dup, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i], s = logistic(v), u = up ? up[i] : 1.0f;
        if (dx) dx[i] += dy[i] * u * (s * (1.0f + v * (1.0f - s)));
        if (dup) dup[i] += dy[i] * v * s;
    }
}
}  // namespace

Var silu(const Var& x) {
    Tensor y = empty(x.shape());
    const float* in = x.value().data();
    parallel_ranges(y.size(), elementwise_grain,
                    [&](std::size_t b, std::size_t e) { silu_forward(in + b, nullptr, y.data() + b, e - b); });
    return unary(std::move(y), x, [](const Tensor& v, const Tensor&, const Tensor& dy, Tensor& dx) {
        parallel_ranges(v.size(), elementwise_grain, [&](std::size_t b, std::size_t e) {
            silu_backward(v.data() + b, nullptr, dy.data() + b, dx.data() + b, nullptr, e - b);
        });
    });
}

Var silu_mul(const Var& gate, const Var& up) {
    if (gate.shape() != up.shape())
        throw ShapeError("silu_mul: gate " + to_string(gate.shape()) + " and up " + to_string(up.shape()) +
                         " must have one shape");
    Tensor y = empty(gate.shape());
    const float *g = gate.value().data(), *u = up.value().data();
    parallel_ranges(y.size(), elementwise_grain,
                    [&](std::size_t b, std::size_t e) { silu_forward(g + b, u + b, y.data() + b, e - b); });
    if (!ad::should_record(gate, up)) return Var(std::move(y));
    auto gv = gate.shared_value(), uv = up.shared_value();
    return ad::record(ad::OpKind::activation, share(std::move(y)), {gate, up},
                      [gv, uv](const Tensor& dy, ad::Grads& grads) {
                          float* dg = grads.wants(0) ? grads[0].data() : nullptr;
                          float* du = grads.wants(1) ? grads[1].data() : nullptr;
                          parallel_ranges(gv->size(), elementwise_grain, [&](std::size_t b, std::size_t e) {
                              silu_backward(gv->data() + b, uv->data() + b, dy.data() + b, dg ? dg + b : nullptr,
                                            du ? du + b : nullptr, e - b);
                          });
                      });
}

}  // namespace remat::ops
