#include "remat/layers/layer.hpp"

#include "remat/ad/backend.hpp"

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

}  // namespace remat::nn
