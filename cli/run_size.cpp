#include "cli/run_size.hpp"

#include "cli/errors.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/hf/weight_files.hpp"
#include "remat/planning/memory_limit.hpp"

namespace remat::cli {

std::size_t checkpoint_weight_bytes(const std::filesystem::path& dir) { return hf::WeightFiles::open(dir).float32_bytes(); }

void check_run_fits(const std::string& flags, std::size_t weight_bytes, std::size_t batch, std::size_t seq,
                    std::size_t vocab_size, const RunSize& size) {
    // In long double: B · T · V of absurd flags overflows 64 bits.
    const long double logits = static_cast<long double>(batch) * seq * vocab_size * sizeof(float);
    const long double weights = static_cast<long double>(weight_bytes);
    const long double least = weights * size.weight_copies + logits * size.logit_copies;
    const planning::MemoryLimit memory = planning::memory_limit();
    if (least <= static_cast<long double>(memory.limit)) return;
    auto bytes = [](long double b) {
        return b >= 1e18L ? std::to_string(static_cast<double>(b)) + " bytes" : readable_memory_size(static_cast<std::size_t>(b));
    };
    auto times = [](std::size_t n) { return n == 1 ? std::string() : n == 2 ? std::string(", twice") : ", " + std::to_string(n) + " times"; };
    throw Failure(flags + ": this run needs at least " + bytes(least) + " (the logits, " + std::to_string(batch) + " x " +
                  std::to_string(seq) + " x " + std::to_string(vocab_size) + " x 4 bytes = " + bytes(logits) + times(size.logit_copies) +
                  (weight_bytes ? "; the weights, " + bytes(weights) + times(size.weight_copies) : std::string()) + "), more than the " +
                  bytes(memory.limit) +
                  " this process may use (" + memory.source + ")");
}

}  // namespace remat::cli
