#include "remat/ops/reduce.hpp"

#include "common.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// s · Σ x, a 0-d tensor; dx += s · dy.
Var scaled_sum(const Var& x, double s) {
    double total = 0.0;
    for (float v : x.value()) total += v;
    Tensor y = full(Shape{}, static_cast<float>(total * s));
    if (!ad::should_record(x)) return Var(std::move(y));
    const auto factor = static_cast<float>(s);
    return ad::record(ad::OpKind::reduction, share(std::move(y)), {x}, [factor](const Tensor& dy, ad::Grads& g) {
        const float d = dy.data()[0] * factor;
        for (float& v : g[0]) v += d;
    });
}
}  // namespace

Var sum(const Var& x) { return scaled_sum(x, 1.0); }

Var mean(const Var& x) {
    if (x.size() == 0) throw ValueError("mean: empty tensor " + to_string(x.shape()));
    return scaled_sum(x, 1.0 / static_cast<double>(x.size()));
}

}  // namespace remat::ops
