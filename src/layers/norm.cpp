#include "remat/layers/norm.hpp"

#include <cmath>
#include <sstream>

#include "remat/ops/elementwise.hpp"
#include "remat/ops/norm.hpp"

namespace remat::nn {

namespace {
std::string format_float(float v) {
    std::ostringstream s;
    s << v;
    return s.str();
}
}  // namespace

LayerNorm LayerNorm::create(std::size_t features, float eps) {
    return {Param{full(Shape{features}, 1.0f)}, Param{zeros(Shape{features})}, eps};
}

std::string LayerNorm::describe() const {
    return "LayerNorm(" + std::to_string(weight.size()) + ", eps=" + format_float(eps) + ")";
}

Var LayerNorm::operator()(const Var& x) const {
    check_features("LayerNorm", x, weight.size());
    return ops::layer_norm(x, leaf(weight), leaf(bias), eps);
}

RMSNorm RMSNorm::create(std::size_t features, float eps) { return {Param{full(Shape{features}, 1.0f)}, eps}; }

std::string RMSNorm::describe() const {
    return "RMSNorm(" + std::to_string(weight.size()) + ", eps=" + format_float(eps) + ")";
}

Var RMSNorm::operator()(const Var& x) const {
    check_features("RMSNorm", x, weight.size());
    return ops::rms_norm(x, leaf(weight), eps);
}

BatchNorm BatchNorm::create(std::size_t features, float momentum, float eps) {
    return {Param{full(Shape{features}, 1.0f)},
            Param{zeros(Shape{features})},
            zeros(Shape{features}),
            full(Shape{features}, 1.0f),
            zeros(Shape{}),
            momentum,
            eps,
            Mode::automatic};
}

std::string BatchNorm::describe() const {
    return "BatchNorm(" + std::to_string(weight.size()) + ", momentum=" + format_float(momentum) +
           ", eps=" + format_float(eps) + ", mode=" + to_string(mode) + ")";
}

Var BatchNorm::operator()(const Var& x) {
    const std::size_t C = weight.size();
    if (x.dim() != 2 || x.shape()[1] != C)
        throw ShapeError("BatchNorm: expected input (N, " + std::to_string(C) + "), got " + remat::to_string(x.shape()));
    if (x.size() == 0) throw ValueError("BatchNorm: empty batch, input " + remat::to_string(x.shape()));
    if (is_training(mode)) {
        Tensor mean, var;
        Var y = ops::batch_norm(x, leaf(weight), leaf(bias), eps, &mean, &var);
        // Running statistics move once per forward: a checkpoint's recomputation leaves them alone.
        if (!ad::current().recomputing()) {
            const float n = static_cast<float>(x.shape()[0]);
            for (std::size_t c = 0; c < C; ++c) {
                running_mean(c) = (1 - momentum) * running_mean(c) + momentum * mean(c);
                running_var(c) = (1 - momentum) * running_var(c) + momentum * var(c) * n / (n - 1);
            }
            num_batches_tracked() += 1.0f;
        }
        return y;
    }
    // Test mode: y = (x − running_mean) · weight / √(running_var + eps) + bias.
    Tensor inv_std = empty(Shape{C});
    for (std::size_t c = 0; c < C; ++c) inv_std(c) = 1.0f / std::sqrt(running_var(c) + eps);
    Var centred = x - Var(running_mean);
    return centred * (leaf(weight) * Var(std::move(inv_std))) + leaf(bias);
}

}  // namespace remat::nn
