#pragma once
// Where a training run stands, so that a resumed run continues exactly as the uninterrupted one:
//
//   train::RunState state{.seed = 42};
//   … after each step: ++state.step; state.index += windows; state.tokens += tokens; …
//   train::save_run_state(state, dir / "run_state.json");
//   train::RunState again = train::load_run_state(dir / "run_state.json");
//
// With remat's counter-based generators and epoch orders a run's randomness follows from the seed
// and the position, so these few numbers (with the weights and the optimiser state, saved beside
// them) are all a resume needs; the generators' states are kept too, for checking and for
// generators a program keeps itself. The file is JSON, written atomically.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "remat/core/random.hpp"

namespace remat::train {

struct RunState {
    std::int64_t step = 0;     // optimiser updates done
    std::uint64_t epoch = 0;   // the epoch the next window comes from (0-based)
    std::uint64_t index = 0;   // the next window's index in that epoch's order
    std::uint64_t tokens = 0;  // tokens trained on so far
    std::uint64_t seed = 0;
    // Generators by name ("dropout": its state after the last step).
    std::vector<std::pair<std::string, Generator::State>> generators{};
    // The run's arguments ("--lr" → "3e-4"), as given: a resumed run compares them.
    std::vector<std::pair<std::string, std::string>> arguments{};
    // The checkpoint folder's other files by name, with file_digest of each when saved: a resume
    // refuses a file changed since (tensors swapped, bytes edited). Runs saved before have none.
    std::vector<std::pair<std::string, std::uint64_t>> files{};
    bool operator==(const RunState&) const = default;
};

void save_run_state(const RunState& state, const std::filesystem::path& path);
// FNV-1a 64 over a file's bytes (eight at a time, in four lanes: GB/s). FormatError naming an
// unreadable file.
std::uint64_t file_digest(const std::filesystem::path& path);
// FormatError naming the file and the field for anything missing, mistyped or out of range.
RunState load_run_state(const std::filesystem::path& path);

}  // namespace remat::train
