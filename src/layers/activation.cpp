#include "remat/layers/activation.hpp"

namespace remat::nn {

std::optional<Activation> parse_activation(std::string_view name) {
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::gelu_new;
    if (name == "gelu") return Activation::gelu;
    if (name == "relu") return Activation::relu;
    if (name == "tanh") return Activation::tanh;
    if (name == "silu" || name == "swish") return Activation::silu;
    return std::nullopt;
}

const char* name(Activation a) {
    switch (a) {
        case Activation::gelu_new: return "gelu_new";
        case Activation::gelu: return "gelu";
        case Activation::relu: return "relu";
        case Activation::tanh: return "tanh";
        case Activation::silu: return "silu";
    }
    return "gelu_new";
}

const char* activation_names() { return "gelu_new, gelu, relu, tanh or silu"; }

}  // namespace remat::nn
