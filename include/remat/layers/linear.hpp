#pragma once
// Linear: y = x·Wᵀ + b, W: (out, in) — PyTorch's nn.Linear, Flux's Dense.
// Conv1D: y = x·W + b,  W: (in, out) — HuggingFace GPT-2's Conv1D, so its weights load untransposed.
// Either may hold a LoRA adapter (layers/lora.hpp), added to its output: set_lora fills the slot.
#include <optional>

#include "remat/layers/layer.hpp"
#include "remat/layers/lora.hpp"
#include "remat/tree/node.hpp"

namespace remat::nn {

struct Linear {
    BOOST_HANA_DEFINE_STRUCT(Linear, (Param, weight), (std::optional<Param>, bias), (std::optional<LoRA>, adapter));
    static constexpr const char* name = "Linear";

    // Glorot-uniform weight, zero bias.
    static Linear create(std::size_t in, std::size_t out, Generator& rng, bool with_bias = true);
    std::size_t in_features() const { return weight.shape()[1]; }
    std::size_t out_features() const { return weight.shape()[0]; }
    std::string describe() const;
    Var operator()(const Var& x) const;
};

struct Conv1D {
    BOOST_HANA_DEFINE_STRUCT(Conv1D, (Param, weight), (Param, bias), (std::optional<LoRA>, adapter));
    static constexpr const char* name = "Conv1D";

    // Weight N(0, std²) as HF GPT-2 initialises it, zero bias.
    static Conv1D create(std::size_t in, std::size_t out, Generator& rng, float std = 0.02f);
    std::size_t in_features() const { return weight.shape()[0]; }
    std::size_t out_features() const { return weight.shape()[1]; }
    std::string describe() const;
    Var operator()(const Var& x) const;
};

}  // namespace remat::nn
