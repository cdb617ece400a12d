#include "src/text/pretokenize.hpp"

namespace remat::text::detail {

const Regex& gpt2_pattern() {
    static const Regex pattern = Regex::from_oniguruma(R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re",
                                                       "GPT-2 pre-tokenizer");
    return pattern;
}

std::string_view Pretokens::next() {
    if (offset_ >= text_.size() || !gpt2_pattern().find(text_, offset_, match_.data)) {  // no match is unreachable: every character matches
        offset_ = text_.size();
        return {};
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_.data);
    offset_ = ovector[1];
    return text_.substr(ovector[0], ovector[1] - ovector[0]);
}

}  // namespace remat::text::detail
