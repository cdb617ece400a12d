#pragma once
// `remat info PATH`: what a model folder or a .safetensors file holds.
#include "cli/command.hpp"
#include <filesystem>

namespace remat::cli {

// A folder: loads the model (as `remat run` would) and prints its architecture, config fields, the
// checkpoint's tensors and the exact parameter count ("parameters: 124439808"); load warnings go to
// stderr. A file: its validated safetensors header. Throws on any problem; returns the exit code.
int info(const std::filesystem::path& path);


// `remat info` and its flags, registered on the `remat` app.
Command add_info_command(CLI::App& remat);

}  // namespace remat::cli
