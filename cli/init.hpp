#pragma once
// `remat init DIR --arch MODEL_TYPE`: a randomly initialised model, as HuggingFace initialises one,
// written as config.json + model.safetensors — the same bytes for the same seed and sizes.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.hpp"
#include "models/architecture.hpp"

namespace remat::cli {

struct InitOptions {
    std::filesystem::path dir;
    std::string arch;  // a model_type of the architecture table
    // Sizes by remat's generic names, each architecture mapping them to its own config fields
    // (models::Architecture::size_fields); unset ones keep HF's defaults.
    std::optional<std::int64_t> n_layer, n_embd, n_head, vocab_size, n_positions;
    // Config fields by HF's name (--rope-theta 500000 → rope_theta), values as given.
    std::vector<std::pair<std::string, std::string>> fields;
    std::uint64_t seed = 0;
    bool force = false;  // overwrite a folder that already holds a model
};

int init(const InitOptions& options);

// `remat init` and its flags, registered on the `remat` app.
Command add_init_command(CLI::App& remat);

// The table's architecture for an --arch value: the first entry of that model_type; Failure listing
// the model_types otherwise.
const models::Architecture& architecture_for_init(const std::string& arch);

}  // namespace remat::cli
