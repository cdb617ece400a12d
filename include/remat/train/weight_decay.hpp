#pragma once
// Which parameters weight decay applies to, by HF Trainer's rule (get_decay_parameter_names):
// every parameter except biases and the weights of normalisation layers (LayerNorm, BatchNorm).
//
//   auto state = train::setup(train::AdamW{.lr = 3e-4f, .weight_decay = 0.1f}, model);
//   state.decays = train::weight_decay_mask(model);
//
// One entry per parameter, in tree::parameters order (the order OptimiserState::decays takes).
#include <string>
#include <vector>

#include "remat/layers/norm.hpp"
#include "remat/tree/walk.hpp"

namespace remat::train {

// The layers whose parameters never decay.
template <class T>
inline constexpr bool is_normalisation = false;
template <>
inline constexpr bool is_normalisation<nn::LayerNorm> = true;
template <>
inline constexpr bool is_normalisation<nn::BatchNorm> = true;
template <>
inline constexpr bool is_normalisation<nn::RMSNorm> = true;

template <class Model>
std::vector<bool> weight_decay_mask(Model& model) {
    std::vector<bool> decays;
    std::vector<std::string> norm_layers;  // paths, each followed by its own parameters (pre-order)
    tree::visit(model, [&](auto& node, const std::string& path) {
        using N = tree::bare<decltype(node)>;
        if constexpr (is_normalisation<N>) {
            norm_layers.push_back(path.empty() ? path : path + ".");
        } else if constexpr (tree::is_param<N>) {
            const bool bias = path == "bias" || path.ends_with(".bias");
            bool in_norm = false;
            for (const std::string& prefix : norm_layers) in_norm = in_norm || path.starts_with(prefix);
            decays.push_back(!bias && !in_norm);
        }
    });
    return decays;
}

}  // namespace remat::train
