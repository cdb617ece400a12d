#pragma once
// Which tokenizer a token file was written with: a 64-bit hash of the tokenizer's files, so that a
// corpus encoded for one vocabulary is never trained with another.
#include <cstdint>
#include <filesystem>
#include <string>

namespace remat::data {

// FNV-1a 64 over, for each of merges.txt, tokenizer.json, tokenizer_config.json, vocab.json and
// vocab.txt present in `folder` (in that order, sorted by name): the name, a zero byte, the file's
// size as 8 little-endian bytes, its bytes. A folder with none of them (raw bytes as ids) hashes
// nothing: its fingerprint is FNV-1a's offset basis, raw_bytes_fingerprint. Throws FormatError naming
// a file that is present but unreadable.
std::uint64_t tokenizer_fingerprint(const std::filesystem::path& folder);

inline constexpr std::uint64_t raw_bytes_fingerprint = 0xcbf29ce484222325ull;

// The 16 lower-case hex digits messages print: "0123456789abcdef".
std::string format_fingerprint(std::uint64_t fingerprint);

}  // namespace remat::data
