#pragma once
// `remat demo [DIR]`: the README's main job. Fine-tunes a causal LM twice side by side from the same
// seed — plainly and with every block checkpointed — and prints time per step, peak activation
// memory and final loss of each, then the largest difference between their gradients (exactly 0).
// Without DIR the model is a small byte-level model of the table's first causal LM, made from the
// seed, and the text is
// data/founding-texts.txt, compiled into the binary.
#include "cli/command.hpp"
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "cli/training.hpp"

namespace remat::cli {

struct DemoOptions {
    std::optional<std::filesystem::path> dir;   // default: the embedded model
    std::optional<std::filesystem::path> data;  // default: the embedded text
    std::int64_t steps = 20, batch = 8;
    std::optional<std::int64_t> seq;  // default: min(128, n_positions)
    Hyper hyper{.lr = 1e-3f};
    std::uint64_t seed = 0;
    Precision precision = Precision::fp32;  // of both runs
};

int demo(const DemoOptions& options);


// data/founding-texts.txt (generated into the build by tools/embed_file.py).
std::string_view demo_text();

// `remat demo` and its flags, registered on the `remat` app.
Command add_demo_command(CLI::App& remat);

}  // namespace remat::cli
