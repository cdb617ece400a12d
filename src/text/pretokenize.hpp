#pragma once
// GPT-2's pre-tokenisation regex (private to src/text).
#include <string_view>

#include "src/text/regex.hpp"

namespace remat::text::detail {

// encoder.py's pattern, with \s as the `regex` module means it, Unicode White_Space (PCRE2's own \s
// adds U+180E). Letters and numbers are PCRE2's Unicode tables. Every character falls in one branch, so
// the pieces tile the text:
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Compiled once, shared by every thread.
const Regex& gpt2_pattern();

// The pieces of a valid UTF-8 text, in order, as encoder.py's re.findall cuts them:
//     Pretokens pieces(text);
//     while (auto piece = pieces.next()) ...
class Pretokens {
public:
    explicit Pretokens(std::string_view utf8_text) : text_(utf8_text), match_(gpt2_pattern()) {}

    // The next piece, or an empty view at the end (a piece is never empty).
    std::string_view next();

private:
    std::string_view text_;
    std::size_t offset_ = 0;
    MatchData match_;
};

}  // namespace remat::text::detail
