#pragma once
// Reading GPT-2 tokenizer files into the tables of src/text/bpe.hpp (private to src/text).
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "src/text/bpe.hpp"

namespace remat::text::detail {

// Both throw FormatError naming the file (and the line or JSON path) and the problem.
std::shared_ptr<const Gpt2Tables> read_vocab_and_merges(const std::filesystem::path& vocab_json,
                                                        const std::filesystem::path& merges_txt);
std::shared_ptr<const Gpt2Tables> read_tokenizer_json(const std::filesystem::path& tokenizer_json);

// A tokenizer file's bytes (remat::read_file, bounded at 256 MiB); FormatError naming the file.
std::string read_file(const std::filesystem::path& file);
// A JSON file, duplicate keys at any depth rejected; FormatError naming the file.
nlohmann::json read_json(const std::filesystem::path& file);

}  // namespace remat::text::detail
