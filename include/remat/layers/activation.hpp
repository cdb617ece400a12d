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

#include <optional>
#include <string_view>

namespace remat::nn {

// An activation chosen by name at run time, as HF configs name them (activation_function,
// hidden_act): a plain enum member of a layer, so it passes through walks as an opaque leaf.
enum class Activation { gelu_new, gelu, relu, tanh, silu };

// HF's names: "gelu_new" (also "gelu_pytorch_tanh", "gelu_fast": the tanh approximation), "gelu"
// (exact erf), "relu", "tanh", "silu" (also "swish"); nullopt for any other.
std::optional<Activation> parse_activation(std::string_view name);
// The canonical name: parse_activation(name(a)) == a.
const char* name(Activation a);
// "gelu_new, gelu, relu or tanh": for messages that list the accepted names.
const char* activation_names();
// The activation applied element-wise.
inline Var apply(Activation a, const Var& x) {
    switch (a) {
        case Activation::gelu_new: return ops::gelu_tanh(x);
        case Activation::gelu: return ops::gelu_erf(x);
        case Activation::relu: return ops::relu(x);
        case Activation::tanh: return ops::tanh(x);
        case Activation::silu: return ops::silu(x);
    }
    return ops::gelu_tanh(x);
}

}  // namespace remat::nn
