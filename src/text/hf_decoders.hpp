#pragma once
// tokenizer.json's decoders remat reads (private to src/text): ByteLevel, Metaspace, ByteFallback, Fuse,
// Strip, Replace and a Sequence of them. Each turns the list of token strings into another list, as
// tokenizers' Decoder::decode_chain does; the result is the last list joined.
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "src/text/regex.hpp"

namespace remat::text::detail {

struct ByteLevelDecoder {};     // byte symbols back to bytes, all tokens at once; bytes that are not UTF-8 become U+FFFD
struct MetaspaceDecoder {
    std::string replacement;    // becomes ' '
    bool strip_first;           // ... except at the start of the first token (prepend_scheme not "never")
};
struct ByteFallbackDecoder {};  // runs of "<0xNN>" tokens to their bytes, or one U+FFFD per token when not UTF-8
struct FuseDecoder {};          // all tokens joined into one
struct StripDecoder {
    std::string content;        // one character
    std::size_t start, stop;    // at most this many taken from each token's start and end
};
struct ReplaceDecoder {
    Regex pattern;
    std::string content;
};
using Decoder = std::variant<ByteLevelDecoder, MetaspaceDecoder, ByteFallbackDecoder, FuseDecoder, StripDecoder, ReplaceDecoder>;

// The steps of tokenizer.json's "decoder" (null: none, and decode joins tokens with spaces).
std::vector<Decoder> read_decoders(const nlohmann::json& decoder, const std::string& where);

std::string decode_tokens(const std::vector<Decoder>& steps, std::vector<std::string> tokens);

}  // namespace remat::text::detail
