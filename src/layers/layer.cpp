#include "remat/layers/layer.hpp"

#include "remat/ad/backend.hpp"

#include <cmath>

namespace remat::nn {

bool is_training(Mode mode) {
    switch (mode) {
        case Mode::train: return true;
        case Mode::test: return false;
        case Mode::automatic: return ad::current().grad_enabled();
    }
    return false;
}

std::string to_string(Mode mode) {
    switch (mode) {
        case Mode::train: return "train";
        case Mode::test: return "test";
        case Mode::automatic: return "automatic";
    }
    return "?";
}

void check_features(const char* layer, const Var& x, std::size_t features) {
    if (x.dim() == 0 || x.shape().back() != features)
        throw ShapeError(std::string(layer) + ": expected input (…, " + std::to_string(features) + "), got " +
                         remat::to_string(x.shape()));
    if (x.size() == 0) throw ValueError(std::string(layer) + ": empty batch, input " + remat::to_string(x.shape()));
}

void check_rank(const char* layer, const Var& x, std::size_t rank, const char* expected) {
    if (x.dim() != rank)
        throw ShapeError(std::string(layer) + ": expected input " + expected + ", got " + remat::to_string(x.shape()));
    if (x.size() == 0) throw ValueError(std::string(layer) + ": empty batch, input " + remat::to_string(x.shape()));
}

namespace detail {

void check_finite(const char* what, const Var& x) {
    const float* p = x.value().data();
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isfinite(p[i])) continue;
        // The flat index as a multi-index: (i / stride_0, …) over the C-order shape.
        const Shape& shape = x.shape();
        std::vector<std::size_t> index(shape.size());
        std::size_t rest = i;
        for (std::size_t d = shape.size(); d-- > 0;) {
            index[d] = rest % shape[d];
            rest /= shape[d];
        }
        std::string at = "(";
        for (std::size_t d = 0; d < index.size(); ++d) at += (d ? ", " : "") + std::to_string(index[d]);
        at += ")";
        const char* kind = std::isnan(p[i]) ? "NaN" : p[i] > 0 ? "inf" : "-inf";
        throw ValueError(std::string(what) + " " + remat::to_string(shape) + " has " + kind + " at index " + at);
    }
}

void empty_batch(const char* layer, const char* what, const Shape& shape) {
    throw ValueError(std::string(layer) + ": empty batch, " + what + " " + remat::to_string(shape));
}

}  // namespace detail

}  // namespace remat::nn
