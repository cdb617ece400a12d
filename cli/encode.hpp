#pragma once
// `remat encode TOKDIR INPUT... -o OUT`: text into a token file that `remat train --data` memory-maps.
#include <filesystem>
#include <optional>
#include <vector>

#include "cli/command.hpp"

namespace remat::cli {

struct EncodeOptions {
    std::filesystem::path tokdir;  // a model folder (config.json) or a tokenizer folder
    std::vector<std::filesystem::path> inputs;
    std::filesystem::path out;
    std::optional<double> valid_fraction;
    std::optional<std::size_t> valid_docs;
};

// Prints the tokenizer, one line per file written and the speed on stdout, a live progress line on a
// terminal only; warnings on stderr. Throws on any problem; returns the exit code.
int encode(const EncodeOptions& options);

// `remat encode` and its flags, registered on the `remat` app.
Command add_encode_command(CLI::App& remat);

}  // namespace remat::cli
