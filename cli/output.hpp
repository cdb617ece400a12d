#pragma once
// Failing early, before minutes of work, when the output cannot be written.
#include <filesystem>

namespace remat::cli {

// Tries the very temporary name the atomic writers use ("<path>.tmp-<pid>"), then removes it.
// access() would not do: it says yes to root everywhere. Failure names the path and the reason.
void check_writable(const std::filesystem::path& file);

// Creates the folder (and its parents) if needed and checks that model files can be written in it.
void prepare_output_folder(const std::filesystem::path& dir);

}  // namespace remat::cli
