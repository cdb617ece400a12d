#pragma once
// Qwen2's configuration (Qwen2Config, transformers 4.57): the Llama family's fields with Qwen2's
// defaults, biases on q, k and v (never o), and sliding windows by layer.
#include <string>
#include <vector>

#include "models/llama/config.hpp"

namespace remat::qwen2 {

struct Config : llama::Fields, models::ConfigFile<Config> {
    bool use_sliding_window = false;
    std::size_t sliding_window = 4096;  // 0: null
    std::size_t max_window_layers = 28;
    // Per layer "full_attention" or "sliding_attention"; empty: from the three fields above, as HF:
    // layers from max_window_layers on slide when use_sliding_window is set.
    std::vector<std::string> layer_types{};

    Config() {
        vocab_size = 151936;
        intermediate_size = 22016;
        num_key_value_heads = 32;
        max_position_embeddings = 32768;
    }
    llama::Settings settings() const;
    static const config_json::Schema<Config>& schema();  // config.cpp
};

}  // namespace remat::qwen2
