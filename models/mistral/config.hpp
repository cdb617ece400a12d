#pragma once
// Mistral's configuration (MistralConfig, transformers 4.57): the Llama family's fields with
// Mistral's defaults and one sliding window for every layer (null: none).
#include "models/llama/config.hpp"

namespace remat::mistral {

struct Config : llama::Fields, models::ConfigFile<Config> {
    std::size_t sliding_window = 4096;  // 0: null, full causal attention

    Config() {
        intermediate_size = 14336;
        num_key_value_heads = 8;
        max_position_embeddings = 4096 * 32;
    }
    llama::Settings settings() const {
        return {*this, false, false, false, std::vector<std::size_t>(num_hidden_layers, sliding_window)};
    }
    static const config_json::Schema<Config>& schema();  // config.cpp
};

}  // namespace remat::mistral
