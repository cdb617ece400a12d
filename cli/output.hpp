#pragma once
// Failing early, before minutes of work, when an output cannot or must not be written: every output
// is checked before a model is loaded.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace remat::cli {

// Files a command reads, so that no output overwrites one of them.
using Reading = std::vector<std::filesystem::path>;

// Refuses `out` (given with `flag`, "--out") unless it is absent or a regular file, in a folder that
// exists and can be written, and not one of `reading` (the same file by any path, a hard link or a
// symlink included). Tries the very temporary name the atomic writers use ("<path>.tmp-<pid>"), then
// removes it: access() would not do, it says yes to root everywhere. Failure names the path and why:
//   "--out: the path is empty"
//   "/dev/null: is a character device; --out takes a regular file or a new path"
//   "DIR/model.safetensors: --out would overwrite a file this command reads; write elsewhere"
//   "OUT: cannot write: folder DIR does not exist", "OUT: cannot write in folder DIR: Permission denied"
void check_output_file(const std::string& flag, const std::filesystem::path& out, const Reading& reading = {});

// Creates the folder (and its parents) if needed and checks that model files can be written in it.
// (Writing a model into the folder it was read from is allowed: it is saved atomically after loading.)
// The folder it created is removed again when the command ends with the folder still empty (refused
// after this check, it leaves nothing behind): hold the result until then.
struct OutputFolder {
    std::filesystem::path created;  // empty: the folder was there
    OutputFolder() = default;
    explicit OutputFolder(std::filesystem::path dir) : created(std::move(dir)) {}
    OutputFolder(OutputFolder&& o) noexcept : created(std::exchange(o.created, {})) {}
    OutputFolder& operator=(OutputFolder&&) = delete;
    ~OutputFolder();
};
[[nodiscard]] OutputFolder prepare_output_folder(const std::filesystem::path& dir);

// The files of a model folder that remat may read: config.json, the weights (shards and their index,
// pytorch_model.bin) and the tokenizer's files.
Reading model_folder_files(const std::filesystem::path& dir);

}  // namespace remat::cli
