#pragma once
// Reading a whole file into memory, strictly: the one reader behind config.json, the tokenizer
// files and sharded-weight indexes.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace remat {

// An open file descriptor for reading, closed with the object.
class ReadableFile {
public:
    ReadableFile(ReadableFile&& other) noexcept;
    ReadableFile& operator=(ReadableFile&&) = delete;
    ~ReadableFile();
    int fd() const { return fd_; }
    std::size_t size() const { return size_; }  // when opened

private:
    ReadableFile() = default;
    friend ReadableFile open_regular_file(const std::filesystem::path& path);
    int fd_ = -1;
    std::size_t size_ = 0;
};

// What a file of this st_mode is, for messages: "a folder", "a FIFO (named pipe)", "a character
// device", "a block device", "a socket".
std::string special_file_kind(unsigned mode);

// Why `path` cannot be found, for "<path>: <why>": "no such file or folder", "a symlink loop (too many
// levels of symbolic links)", "a name too long for the file system (File name too long)", or the
// system's reason ("Permission denied"). For a path that exists: "exists".
std::string why_missing(const std::filesystem::path& path);

// Opens `path` for reading if it is a regular file — without blocking, whatever it is. Throws
// FormatError starting with the path:
//   "<path>: cannot read: <reason>"     (errno's text: "No such file or directory", …)
//   "<path>: is a folder, expected a file"
//   "<path>: is a FIFO (named pipe), expected a regular file"   (or a character device, a block
//                                        device, a socket: /dev/zero, /dev/urandom, a pipe)
ReadableFile open_regular_file(const std::filesystem::path& path);

// The bytes of the regular file at `path`. Throws FormatError, the message starting with the path:
//   "<path>: cannot read: <reason>"      it cannot be opened or read (the reason is errno's text:
//                                        "No such file or directory", "Permission denied", …)
//   "<path>: is a folder, expected a file"
//   "<path>: is a character device, expected a regular file"   (a device, a pipe, a socket)
//   "<path>: is <n> bytes, over the <max_bytes>-byte limit for <what>"   (a multi-gigabyte config.json)
//   "<path>: holds more than <max_bytes> bytes, over the …"   (one that grows while it is read)
// `what` names the kind of file ("a config file"). Nothing beyond max_bytes + 1 bytes is read or
// allocated, whatever size the file claims.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

}  // namespace remat
