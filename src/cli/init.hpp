#pragma once
// `remat init DIR --arch gpt2|bert`: a randomly initialised model, as HuggingFace initialises one,
// written as config.json + model.safetensors — the same bytes for the same seed and sizes.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace remat::cli {

struct InitOptions {
    std::filesystem::path dir;
    std::string arch;  // "gpt2" or "bert"
    // Sizes in GPT-2's names (BERT: num_hidden_layers, hidden_size, num_attention_heads,
    // max_position_embeddings); unset ones keep HF's defaults (GPT-2 small, BERT-base).
    std::optional<std::int64_t> n_layer, n_embd, n_head, vocab_size, n_positions;
    std::uint64_t seed = 0;
    bool force = false;  // overwrite a folder that already holds a model
};

int init(const InitOptions& options);

}  // namespace remat::cli
