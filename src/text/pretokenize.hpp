#pragma once
// GPT-2's pre-tokenisation regex, run by PCRE2 (private to src/text).
#include <string_view>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace remat::text::detail {

// The pieces of a valid UTF-8 text, in order, as encoder.py's re.findall cuts them:
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with \s as the `regex` module means it, Unicode White_Space (PCRE2's own \s adds U+180E). Letters and
// numbers are PCRE2's Unicode tables. Every character falls in one branch, so the pieces tile the text.
//     Pretokens pieces(text);
//     while (auto piece = pieces.next()) ...
class Pretokens {
public:
    explicit Pretokens(std::string_view utf8_text);
    ~Pretokens();
    Pretokens(const Pretokens&) = delete;
    Pretokens& operator=(const Pretokens&) = delete;

    // The next piece, or an empty view at the end (a piece is never empty).
    std::string_view next();

private:
    std::string_view text_;
    std::size_t offset_ = 0;
    pcre2_match_data* match_;
};

}  // namespace remat::text::detail
