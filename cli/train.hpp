#pragma once
// `remat train DIR --data TEXT`: fine-tunes a causal LM model folder on a text file (causal language
// modelling on windows drawn from a seed), with AdamW and gradient clipping, and saves it in
// HuggingFace's format (the contract: ../../docs/cli.md).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "cli/training.hpp"

namespace remat::cli {

struct TrainOptions {
    std::filesystem::path dir, data;
    std::optional<std::filesystem::path> save;
    std::int64_t steps = 100, batch = 8;
    std::optional<std::int64_t> seq;  // default: min(128, n_positions)
    std::string checkpoint = "none";  // a Policy::parse spec
    Hyper hyper;
    std::uint64_t seed = 0;  // windows and dropout
    std::optional<std::int64_t> log_every;  // plain-line interval; default: about 20 lines
};

int train(const TrainOptions& options);

// `remat train` and its flags, registered on the `remat` app.
Command add_train_command(CLI::App& remat);

}  // namespace remat::cli
