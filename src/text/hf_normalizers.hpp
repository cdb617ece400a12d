#pragma once
// tokenizer.json's normalizers remat reads (private to src/text): NFC, Prepend, Replace and a Sequence
// of them, which becomes the list of its steps.
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "src/text/regex.hpp"

namespace remat::text::detail {

struct Nfc {};
struct Prepend {
    std::string prefix;  // added in front of a text that is not empty
};
struct Replace {
    Regex pattern;
    std::string content;  // replaces every match, left to right
};
using Normalizer = std::variant<Nfc, Prepend, Replace>;

// The steps of tokenizer.json's "normalizer" (null: none). FormatError naming any other type.
std::vector<Normalizer> read_normalizers(const nlohmann::json& normalizer, const std::string& where);

// The text after every step (valid UTF-8 in, valid UTF-8 out).
std::string normalize(const std::vector<Normalizer>& steps, std::string text);

// Every match of `pattern` in `text` replaced by `content`.
std::string replace_all(const Regex& pattern, std::string_view text, std::string_view content);

}  // namespace remat::text::detail
