#pragma once
// `remat run DIR --input IN --out OUT`: one forward and backward pass of a model folder's model on a
// batch, with dropout off, writing logits, loss, optionally every parameter gradient, and measured
// time and activation memory (the contract: ../../docs/cli.md).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "remat/ops/precision.hpp"

namespace remat::cli {

struct RunOptions {
    std::filesystem::path dir, input, output;
    bool grads = false;
    std::string checkpoint = "none";  // a Policy::parse spec
    std::int64_t repeat = 1;          // timed forward+backward passes
    Precision precision = Precision::fp32;
    // A LoRA adapter (HF PEFT's folder) on the model: --grads then writes its tensors alone, by PEFT's names.
    std::optional<std::filesystem::path> adapter;
};

// Throws on any problem (nothing is written then); returns the exit code.
int run(const RunOptions& options);


// `remat run` and its flags, registered on the `remat` app.
Command add_run_command(CLI::App& remat);

}  // namespace remat::cli
