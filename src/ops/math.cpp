#include "remat/ops/math.hpp"

#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include "common.hpp"

namespace remat::ops {
using namespace detail;

// Same-shape element-wise math: xtensor expressions, which vectorise (design.md).

Var exp(const Var& x) {
    Tensor y = xt::exp(x.value());
    return record_unary(ad::OpKind::elementwise, std::move(y), x,
                        [](const Tensor&, const Tensor& y, const Tensor& dy, Tensor& dx) { xt::noalias(dx) += dy * y; });
}

Var log(const Var& x) {
    Tensor y = xt::log(x.value());
    return record_unary(ad::OpKind::elementwise, std::move(y), x,
                        [](const Tensor& v, const Tensor&, const Tensor& dy, Tensor& dx) { xt::noalias(dx) += dy / v; });
}

Var sqrt(const Var& x) {
    Tensor y = xt::sqrt(x.value());
    // torch's formula, dy / (2·√x): at x = 0 the gradient is +inf, as there.
    return record_unary(ad::OpKind::elementwise, std::move(y), x, [](const Tensor&, const Tensor& y, const Tensor& dy, Tensor& dx) {
        xt::noalias(dx) += dy / (2.0f * y);
    });
}

Var clamp(const Var& x, float lo, float hi) {
    if (!(lo <= hi))
        throw ValueError("clamp: lo must not exceed hi, got lo " + std::to_string(lo) + " and hi " + std::to_string(hi));
    const Tensor& v = x.value();
    // Written with comparisons that are false for NaN, so a NaN input stays NaN and gets no gradient.
    Tensor y = xt::where(v < lo, lo, xt::where(v > hi, hi, v));
    return record_unary(ad::OpKind::elementwise, std::move(y), x, [lo, hi](const Tensor& v, const Tensor&, const Tensor& dy, Tensor& dx) {
        xt::noalias(dx) += xt::where(v >= lo && v <= hi, dy, 0.0f);
    });
}

}  // namespace remat::ops
