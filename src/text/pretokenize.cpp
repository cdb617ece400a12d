#include "src/text/pretokenize.hpp"

#include <string>

#include "remat/core/error.hpp"

namespace remat::text::detail {

namespace {

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    return pcre2_get_error_message(code, buffer, sizeof buffer) < 0 ? "PCRE2 error " + std::to_string(code)
                                                                     : reinterpret_cast<const char*>(buffer);
}

// Compiled once, shared by every thread: a pcre2_code is read-only while matching.
class Pattern {
public:
    Pattern() {
        // encoder.py's pattern with \s and \S spelled as the `regex` module reads them.
        constexpr std::string_view pattern =
            R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)re";
        int error = 0;
        PCRE2_SIZE at = 0;
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &error,
                              &at, nullptr);
        if (!code_) throw Error("GPT-2 pre-tokenizer: PCRE2 cannot compile the pattern: " + pcre2_message(error));
        pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // without JIT (an error here), pcre2_match interprets
    }
    ~Pattern() { pcre2_code_free(code_); }
    const pcre2_code* code() const { return code_; }

private:
    pcre2_code* code_;
};

const Pattern& gpt2_pattern() {
    static const Pattern pattern;
    return pattern;
}

}  // namespace

Pretokens::Pretokens(std::string_view utf8_text)
    : text_(utf8_text), match_(pcre2_match_data_create_from_pattern(gpt2_pattern().code(), nullptr)) {
    if (!match_) throw std::bad_alloc();
}

Pretokens::~Pretokens() { pcre2_match_data_free(match_); }

std::string_view Pretokens::next() {
    if (offset_ >= text_.size()) return {};
    // The text was checked once by the caller; PCRE2 would otherwise re-check all of it on every call.
    const int rc = pcre2_match(gpt2_pattern().code(), reinterpret_cast<PCRE2_SPTR>(text_.data()), text_.size(), offset_,
                               PCRE2_NO_UTF_CHECK, match_, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) {  // unreachable: every character matches some branch
        offset_ = text_.size();
        return {};
    }
    if (rc < 0) throw Error("GPT-2 pre-tokenizer: PCRE2 matching failed: " + pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_);
    offset_ = ovector[1];
    return text_.substr(ovector[0], ovector[1] - ovector[0]);
}

}  // namespace remat::text::detail
