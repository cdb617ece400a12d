#pragma once
// Writing a file so that readers see the old contents or the new, never a part (private to src/: hf and
// data use it):
// the bytes go to "<target>.tmp-<pid>" in the target's folder, are synced, and are renamed over the
// target. Used by write_safetensors, write_text_atomically and hf::save, which prepares both of its
// files completely before renaming either.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "remat/hf/safetensors.hpp"

namespace remat::hf::detail {

class AtomicFile {
public:
    // Creates the temporary (O_NOFOLLOW: never through a planted symlink). Failures throw FormatError
    // "<target>: cannot create "<temporary>": <reason>", as do those of the calls below; a target that
    // exists and is not a regular file (a device, a FIFO, a folder, or a symlink to one) is
    // "<target>: is a character device; only a regular file can be replaced".
    explicit AtomicFile(const std::filesystem::path& target);
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();  // removes the temporary unless committed

    void write(std::span<const std::byte> bytes);
    // Overwrites bytes already written (a header whose counts are known at the end), leaving the end
    // of the file where it was.
    void write_at(std::uint64_t offset, std::span<const std::byte> bytes);
    // fsync and close: the contents are durable under the temporary name.
    void finish();
    // finish() if not done yet, then rename over the target and sync the folder.
    void commit();

    const std::filesystem::path& temporary() const { return path_; }

private:
    std::filesystem::path target_, path_;
    int fd_ = -1;
    bool created_ = false;
    [[noreturn]] void fail(const char* verb, const char* rest = "") const;
};

// A safetensors file's bytes into `file`, after the checks of write_safetensors (FormatError naming
// `target`); does not commit.
void write_safetensors(AtomicFile& file, const std::filesystem::path& target, const std::vector<WriteTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace remat::hf::detail
