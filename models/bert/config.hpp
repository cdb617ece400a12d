#pragma once
// BERT's configuration, with HuggingFace's config.json names (BertConfig).
#include <cstddef>
#include <filesystem>
#include <string>

#include "remat/layers/activation.hpp"

namespace remat::bert {

using Activation = nn::Activation;  // HF's hidden_act ("gelu" is the exact erf GELU)

struct Config {
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

    // Throws ValueError naming the field (hidden_size not divisible by the heads, zero sizes, p outside [0, 1]).
    void validate() const;
    // From config.json text; `source` names the file in messages. vocab_size, hidden_size,
    // num_hidden_layers, num_attention_heads and intermediate_size are required; the rest default as
    // in HF. Only position_embedding_type "absolute" is supported.
    static Config from_json(const std::string& text, const std::string& source = "config.json");
    static Config from_file(const std::filesystem::path& path);
    std::string to_json() const;
    // The fields remat reads, as a JSON object (for `remat info`).
    std::string fields_json() const;
};

}  // namespace remat::bert
