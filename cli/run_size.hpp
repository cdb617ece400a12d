#pragma once
// Refusing, within seconds and before a model is loaded, a run that clearly cannot fit in memory:
// `--batch 1000000000` is an error naming the flags, not minutes of loading and an "out of memory".
#include <cstddef>
#include <filesystem>
#include <string>

namespace remat::cli {

// What a run holds at least at once, by kind.
struct RunSize {
    std::size_t weight_copies = 1;  // the weights, their gradients, AdamW's two moments: 4 for training
    std::size_t logit_copies = 1;   // the logits (B, T, V), and their gradient when there is a backward pass
};

// The weights' float32 bytes as the model folder's checkpoint holds them (its header, not its data).
std::size_t checkpoint_weight_bytes(const std::filesystem::path& dir);

// Throws Failure "<flags>: this run needs at least <X> (…), more than the <Y> this process may use
// (<limit's source>)" when weight_bytes · weight_copies + B · T · V · 4 · logit_copies is above
// planning::memory_limit(). `flags` names what the user set: "--batch 1000000000 --seq 16".
void check_run_fits(const std::string& flags, std::size_t weight_bytes, std::size_t batch, std::size_t seq,
                    std::size_t vocab_size, const RunSize& size);

}  // namespace remat::cli
