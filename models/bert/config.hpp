#pragma once
// BERT's configuration, with HuggingFace's config.json names (BertConfig). Reading, validating and
// writing it (from_json, from_file, validate, to_json) come from models::ConfigFile.
#include <cstddef>

#include "models/common/config_file.hpp"
#include "remat/layers/activation.hpp"

namespace remat::bert {

using Activation = nn::Activation;  // HF's hidden_act ("gelu" is the exact erf GELU)

// vocab_size, hidden_size, num_hidden_layers, num_attention_heads and intermediate_size are required
// in a config.json; only position_embedding_type "absolute" is supported.
struct Config : models::ConfigFile<Config> {
    std::size_t vocab_size = 30522;
    std::size_t hidden_size = 768;
    std::size_t num_hidden_layers = 12;
    std::size_t num_attention_heads = 12;
    std::size_t intermediate_size = 3072;
    Activation hidden_act = Activation::gelu;
    double hidden_dropout_prob = 0.1, attention_probs_dropout_prob = 0.1;
    std::size_t max_position_embeddings = 512;
    std::size_t type_vocab_size = 2;
    double layer_norm_eps = 1e-12;
    double initializer_range = 0.02;
    std::size_t pad_token_id = 0;

    // The fields, their rules (hidden_size divisible by the heads, sizes positive, p in [0, 1]): config.cpp.
    static const config_json::Schema<Config>& schema();
};

}  // namespace remat::bert
