#pragma once
// GPT-2's configuration, with HuggingFace's config.json names (GPT2Config). Reading, validating and
// writing it (from_json, from_file, validate, to_json) come from models::ConfigFile.
#include <cstddef>

#include "models/common/config_file.hpp"
#include "remat/layers/activation.hpp"

namespace remat::gpt2 {

using Activation = nn::Activation;  // HF's activation_function

// vocab_size, n_embd, n_layer, n_head and n_positions (or n_ctx) are required in a config.json.
struct Config : models::ConfigFile<Config> {
    std::size_t vocab_size = 50257;
    std::size_t n_positions = 1024;  // old checkpoints: n_ctx
    std::size_t n_embd = 768;
    std::size_t n_layer = 12;
    std::size_t n_head = 12;
    std::size_t n_inner = 0;  // 0: 4·n_embd (HF's null)
    double layer_norm_epsilon = 1e-5;
    Activation activation_function = Activation::gelu_new;
    double resid_pdrop = 0.1, embd_pdrop = 0.1, attn_pdrop = 0.1;
    double initializer_range = 0.02;

    std::size_t inner() const { return n_inner ? n_inner : 4 * n_embd; }
    // The fields, their rules (n_embd divisible by n_head, sizes positive, p in [0, 1]): config.cpp.
    static const config_json::Schema<Config>& schema();
};

}  // namespace remat::gpt2
