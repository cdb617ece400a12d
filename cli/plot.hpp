#pragma once
// `remat plot FILE.jsonl... -o curve.png|curve.svg`: training and validation loss against tokens,
// from the logs `remat train --log` writes (docs/cli.md).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace remat::cli {

struct PlotOptions {
    std::vector<std::filesystem::path> logs;
    std::filesystem::path out;      // .png or .svg
    std::optional<std::string> title;  // default: the log's file name
    double smoothing = 0.9;         // TensorBoard's exponential moving average factor; 0: raw only
    int width = 800, height = 500;  // pixels
};

// Reads every log, draws, writes `out` atomically and prints one line saying what it drew. Throws
// Failure on any problem, before anything is written; returns the exit code.
int plot(const PlotOptions& options);

// `remat plot` and its flags, registered on the `remat` app.
Command add_plot_command(CLI::App& remat);

}  // namespace remat::cli
