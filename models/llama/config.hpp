#pragma once
// Llama's configuration, with HuggingFace's config.json names (LlamaConfig, transformers 4.57). The
// fields the whole family shares (Qwen2 and Mistral read the same ones with their own defaults) are
// llama::Fields; what building a model takes beyond them — biases, per-layer windows — is Settings.
#include <cstddef>
#include <vector>

#include "models/common/config_file.hpp"
#include "remat/layers/activation.hpp"
#include "remat/layers/rotary.hpp"

namespace remat::llama {

using Activation = nn::Activation;
using RopeScaling = nn::RopeScaling;

// LlamaConfig's defaults (a 7B model).
struct Fields {
    std::size_t vocab_size = 32000;
    std::size_t hidden_size = 4096;
    std::size_t intermediate_size = 11008;
    std::size_t num_hidden_layers = 32;
    std::size_t num_attention_heads = 32;
    std::size_t num_key_value_heads = 0;  // 0: num_attention_heads (HF's null)
    std::size_t head_dim = 0;             // 0: hidden_size / num_attention_heads (HF's null)
    std::size_t max_position_embeddings = 2048;
    Activation hidden_act = Activation::silu;
    double rms_norm_eps = 1e-6;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling{};
    double initializer_range = 0.02;
    double attention_dropout = 0.0;
    bool tie_word_embeddings = false;

    std::size_t kv_heads() const { return num_key_value_heads ? num_key_value_heads : num_attention_heads; }
    std::size_t head_size() const { return head_dim ? head_dim : hidden_size / num_attention_heads; }
};

// A model of the family, as the builder takes it.
struct Settings {
    Fields fields;
    bool qkv_bias = false;              // q_proj, k_proj, v_proj biases
    bool o_bias = false;                // o_proj bias
    bool mlp_bias = false;              // gate_proj, up_proj, down_proj biases
    std::vector<std::size_t> windows{};  // per layer: a sliding window, or 0 for full causal attention
};

struct Config : Fields, models::ConfigFile<Config> {
    bool attention_bias = false;  // biases on q, k, v and o
    bool mlp_bias = false;

    Settings settings() const { return {*this, attention_bias, attention_bias, mlp_bias, {}}; }
    static const config_json::Schema<Config>& schema();  // config.cpp
};

}  // namespace remat::llama
