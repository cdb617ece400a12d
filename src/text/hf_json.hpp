#pragma once
// Reading the fields of tokenizer.json's components (private to src/text). Every failure is a
// FormatError "<where>: <problem>", where is the JSON path ("x/tokenizer.json: pre_tokenizer.pretokenizers[1]").
#include <nlohmann/json.hpp>
#include <string>

#include "src/text/regex.hpp"

namespace remat::text::detail {

// The component's "type"; refuses a value that is not an object with a string "type".
std::string type_of(const nlohmann::json& component, const std::string& where);
// A string field; `fallback` when absent or null, a FormatError when required (no fallback) and missing.
std::string string_field(const nlohmann::json& object, const char* key, const std::string& where);
std::string string_field(const nlohmann::json& object, const char* key, const std::string& fallback, const std::string& where);
bool bool_field(const nlohmann::json& object, const char* key, bool fallback, const std::string& where);
std::size_t count_field(const nlohmann::json& object, const char* key, const std::string& where);
// "pattern": {"String": "literal"} or {"Regex": "Oniguruma pattern"}.
Regex pattern_field(const nlohmann::json& object, const std::string& where);
// A string of exactly one character (Metaspace's replacement, Strip's content).
std::string character_field(const nlohmann::json& object, const char* key, const std::string& fallback, const std::string& where);
// The elements of a Sequence's list field (normalizers, pretokenizers, decoders, processors).
const nlohmann::json& list_field(const nlohmann::json& object, const char* key, const std::string& where);

}  // namespace remat::text::detail
