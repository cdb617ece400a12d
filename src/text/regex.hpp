#pragma once
// A compiled PCRE2 pattern over UTF-8 text, with Unicode classes (private to src/text). tokenizer.json's
// patterns are written for Oniguruma; `from_oniguruma` rewrites the escapes whose meaning differs.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace remat::text::detail {

class Regex {
public:
    // Throws FormatError "<where>: cannot compile the pattern …: <PCRE2's message> at offset N".
    static Regex compile(std::string_view pattern, const std::string& where);
    // A pattern that matches `text` literally.
    static Regex literal(std::string_view text, const std::string& where);
    // Oniguruma's \s, \S, \w and \W (as tokenizers uses them: Unicode White_Space; Letter, Mark, Number
    // and Connector_Punctuation) differ from PCRE2's with PCRE2_UCP (\s there adds U+180E, \w leaves out
    // marks): they are spelled out as properties before compiling.
    static Regex from_oniguruma(std::string_view pattern, const std::string& where);

    // Every non-overlapping match in a valid UTF-8 text, left to right, as [begin, end) byte offsets. An
    // empty match is kept and the search goes on one character later, as Oniguruma's iterator does.
    std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;
    // The first match at or after `from`; false when there is none. A pattern that backtracks past
    // PCRE2's limits on this text throws Error "<where>: the pattern "(a+)+$" gives up on a text: …".
    bool find(std::string_view text, std::size_t from, pcre2_match_data* match) const;

    const pcre2_code* code() const { return code_.get(); }

private:
    struct Free {
        void operator()(pcre2_code* code) const { pcre2_code_free(code); }
    };
    Regex(pcre2_code* code, std::string pattern, std::string where)
        : code_(code, Free{}), pattern_(std::move(pattern)), where_(std::move(where)) {}
    std::shared_ptr<pcre2_code> code_;  // read-only once compiled: shared by copies and threads
    std::string pattern_, where_;       // for a match that fails: "<where>: the pattern "…" …"
};

// A match block for one thread's searches with `regex`.
struct MatchData {
    explicit MatchData(const Regex& regex);
    ~MatchData() { pcre2_match_data_free(data); }
    MatchData(const MatchData&) = delete;
    MatchData& operator=(const MatchData&) = delete;
    pcre2_match_data* data;
};

}  // namespace remat::text::detail
