#pragma once
// Activations as plain function objects, usable as layers in a Chain (opaque leaves: no parameters).
#include "remat/ops/activation.hpp"

namespace remat::nn {

struct GeluTanh {
    static constexpr const char* name = "gelu_tanh";
    Var operator()(const Var& x) const { return ops::gelu_tanh(x); }
};
struct GeluErf {
    static constexpr const char* name = "gelu_erf";
    Var operator()(const Var& x) const { return ops::gelu_erf(x); }
};
struct Relu {
    static constexpr const char* name = "relu";
    Var operator()(const Var& x) const { return ops::relu(x); }
};
struct Tanh {
    static constexpr const char* name = "tanh";
    Var operator()(const Var& x) const { return ops::tanh(x); }
};

inline constexpr GeluTanh gelu_tanh{};
inline constexpr GeluErf gelu_erf{};
inline constexpr Relu relu{};
inline constexpr Tanh tanh{};

}  // namespace remat::nn
