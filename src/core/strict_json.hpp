#pragma once
// The one way remat reads JSON from a file it did not write itself — config.json, the safetensors
// header, the shard index, vocab.json, tokenizer.json, a run's state (private to the library, models/
// and cli/; nlohmann-json is not part of the public headers).
//
// Strict where nlohmann-json alone is lenient, and bounded where it would recurse:
//   - a duplicate key at any depth is refused (nlohmann keeps the last one silently);
//   - nothing may follow the value but whitespace, and a NUL byte is refused anywhere (nlohmann's
//     lexer takes a NUL for the end of the input and accepts "{}\0<anything>");
//   - nesting deeper than max_depth is refused while parsing, so no parsed value is deep enough for
//     nlohmann's recursive copy, comparison, dump or destructor to overflow the stack.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "remat/core/error.hpp"

namespace remat::strict_json {

// What parse() throws: a FormatError, with where a syntax error was found.
struct Error : FormatError {
    Error(std::string message, std::size_t syntax_byte) : FormatError(std::move(message)), byte(syntax_byte) {}
    // For "not valid JSON: parse error …", nlohmann's 1-based byte count of where it stopped; one past
    // the end of the text when the text ends early (a line cut off mid-write). 0 otherwise.
    std::size_t byte;
};

// HF's deepest files (a tokenizer.json's normalizer sequences) nest under a dozen levels.
inline constexpr std::size_t max_depth = 64;

// A container read as a stream: the members (or elements) of the object (or array) at `path` are handed
// to `take` one by one as they are read, and the container is left empty in the parsed value — for the
// large flat tables of big files (a tokenizer's vocabulary and merges), whose nodes would cost several
// times the parse. A container of the other kind at the path is parsed as usual (the caller's check of
// the value then names it). Every rule of parse() still holds inside, duplicate keys included.
template <class Json>
struct Streamed {
    std::string path;  // as messages name it: "model.vocab"
    bool object;       // stream an object (members with their keys) or an array (elements, key null)
    // The member's key (null for an array's element), its position, its value. May throw.
    std::function<void(const std::string* key, std::size_t index, Json&& value)> take;
    // take refuses a repeated key itself, with parse()'s message ("duplicate key "x" in model.vocab"), so
    // the builder need not keep a copy of every key.
    bool take_refuses_repeats = false;
    bool seen = false;  // set when a container of the kind was streamed
};

// The value `text` holds. Throws Error "<source>: <problem>", the problem one of
//   "not valid JSON: <the parser's message>"    (syntax, a number out of range, bytes after the value)
//   "not valid JSON: NUL byte at offset <n>"
//   "duplicate key "<key>"" and " in <where>" when nested ("in model.vocab", "in added_tokens[3]")
//   "nested deeper than 64 levels"
// Keys in messages are escaped (remat::in_quotes): a file cannot forge a line of output.
// Json is nlohmann::json or nlohmann::ordered_json (keys in file order).
template <class Json>
Json parse(std::string_view text, const std::string& source, std::span<Streamed<Json>> streamed = {});

// remat::read_file(path, max_bytes, what) — a regular file, bounded in size — then parse(), the
// source being the path.
template <class Json>
Json read(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

}  // namespace remat::strict_json
