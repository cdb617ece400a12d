#pragma once
// GPT-2's configuration, with HuggingFace's config.json names (GPT2Config).
#include <cstddef>
#include <filesystem>
#include <string>

#include "remat/layers/activation.hpp"

namespace remat::gpt2 {

using Activation = nn::Activation;  // HF's activation_function

struct Config {
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
    // Throws ValueError naming the field: n_embd not divisible by n_head, a zero size, p outside [0, 1].
    void validate() const;

    // From config.json text; `source` names the file in messages. The structural fields (vocab_size,
    // n_embd, n_layer, n_head, n_positions or n_ctx) are required; the others default as in HF.
    static Config from_json(const std::string& text, const std::string& source = "config.json");
    static Config from_file(const std::filesystem::path& path);
    // config.json text that HuggingFace transformers can load.
    std::string to_json() const;
    // The fields remat reads, as a JSON object (for `remat info`).
    std::string fields_json() const;
};

}  // namespace remat::gpt2
