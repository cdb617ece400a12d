#pragma once
// Reading a whole file into memory, strictly: the one reader behind config.json, the tokenizer
// files and sharded-weight indexes.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace remat {

// The bytes of the regular file at `path`. Throws FormatError, the message starting with the path:
//   "<path>: cannot read: <reason>"      it cannot be opened or read (the reason is errno's text:
//                                        "No such file or directory", "Permission denied", …)
//   "<path>: is a folder, expected a file"
//   "<path>: not a regular file"          a device, a pipe, a socket
//   "<path>: is <n> bytes, over the <max_bytes>-byte limit for <what>"   (a multi-gigabyte config.json)
//   "<path>: holds more than <max_bytes> bytes, over the …"   (one that grows while it is read)
// `what` names the kind of file ("a config file"). Nothing beyond max_bytes + 1 bytes is read or
// allocated, whatever size the file claims.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

}  // namespace remat
