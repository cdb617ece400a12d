#include "remat/layers/init.hpp"

#include <cmath>

namespace remat::init {

Tensor uniform(const Shape& shape, float low, float high, Generator& rng) {
    Tensor t = empty(shape);
    rng.fill_uniform(t.data(), t.size());
    for (float& v : t) v = low + (high - low) * v;
    return t;
}

Tensor glorot_uniform(const Shape& shape, Generator& rng) {
    const float fan_out = shape.size() > 0 ? static_cast<float>(shape[0]) : 1.0f;
    const float fan_in = shape.size() > 1 ? static_cast<float>(shape[1]) : 1.0f;
    const float a = std::sqrt(6.0f / (fan_in + fan_out));
    return uniform(shape, -a, a, rng);
}

Tensor normal(const Shape& shape, float std, Generator& rng) {
    Tensor t = empty(shape);
    rng.fill_normal(t.data(), t.size(), 0.0f, std);
    return t;
}

}  // namespace remat::init
