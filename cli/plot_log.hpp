#pragma once
// Reading a training log (`remat train --log FILE.jsonl`: one JSON object per optimiser step) for
// `remat plot`: the training and the validation loss against tokens trained on.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace remat::cli::plotting {

struct Sample {
    std::int64_t step = 0;
    double tokens = 0, loss = 0;
};

// Each series in step order. A step logged twice (a resumed run appends) keeps its later value, per
// series: the end-of-run validation line, which has no "loss", leaves that step's training loss alone.
struct RunLog {
    std::vector<Sample> train;  // lines with "loss"
    std::vector<Sample> valid;  // lines with "valid_loss"
};

// Lines holding "step" and "tokens" count; other fields, other objects and blank lines are ignored
// (a null counts as absent). A line that is not a JSON object, or a known field of the wrong type, is a
// Failure naming the file and the line: "run.jsonl: line 3 is not valid JSON (column 17)". So is a
// file that cannot be read or holds nothing to plot.
RunLog read_log(const std::filesystem::path& file);

}  // namespace remat::cli::plotting
