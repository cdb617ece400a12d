#include "src/text/regex.hpp"

#include "remat/core/error.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::text::detail {

namespace {

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    return pcre2_get_error_message(code, buffer, sizeof buffer) < 0 ? "PCRE2 error " + std::to_string(code)
                                                                     : reinterpret_cast<const char*>(buffer);
}

pcre2_code* compile_code(std::string_view pattern, std::uint32_t options, const std::string& where) {
    int error = 0;
    PCRE2_SIZE at = 0;
    // PCRE2_LITERAL takes no PCRE2_UCP (nor needs it).
    const std::uint32_t unicode = options & PCRE2_LITERAL ? PCRE2_UTF : PCRE2_UTF | PCRE2_UCP;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), unicode | options, &error, &at, nullptr);
    if (!code)
        throw FormatError(where + ": cannot compile the pattern " + in_quotes(pattern) + ": " + pcre2_message(error) + " at offset " +
                          std::to_string(at));
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT (an error here), pcre2_match interprets
    return code;
}

constexpr std::string_view word_properties = R"(\p{L}\p{M}\p{N}\p{Pc})";

}  // namespace

Regex Regex::compile(std::string_view pattern, const std::string& where) {
    return Regex(compile_code(pattern, 0, where));
}

Regex Regex::literal(std::string_view text, const std::string& where) { return Regex(compile_code(text, PCRE2_LITERAL, where)); }

Regex Regex::from_oniguruma(std::string_view pattern, const std::string& where) {
    std::string out;
    out.reserve(pattern.size() + 32);
    bool in_class = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[++i];
            if (e == 's')
                out += R"(\p{White_Space})";
            else if (e == 'S')
                out += R"(\P{White_Space})";
            else if (e == 'w')
                out += in_class ? std::string(word_properties) : "[" + std::string(word_properties) + "]";
            else if (e == 'W' && !in_class)
                out += "[^" + std::string(word_properties) + "]";
            else if (e == 'W')
                throw FormatError(where + ": the pattern " + in_quotes(pattern) + " uses \\W inside a character class, which remat does not translate");
            else
                out += c, out += e;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            out += c;
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // a leading ']' is literal
            continue;
        }
        if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {  // [:alpha:]
            const std::size_t end = pattern.find(":]", i + 2);
            if (end != std::string_view::npos) {
                out.append(pattern.substr(i, end + 2 - i));
                i = end + 1;
                continue;
            }
        }
        if (in_class && c == ']') in_class = false;
        out += c;
    }
    return compile(out, where);
}

MatchData::MatchData(const Regex& regex) : data(pcre2_match_data_create_from_pattern(regex.code(), nullptr)) {
    if (!data) throw std::bad_alloc();
}

bool Regex::find(std::string_view text, std::size_t from, pcre2_match_data* match) const {
    // The caller checked the text once; PCRE2 would otherwise re-check all of it on every call.
    const int rc =
        pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from, PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) throw Error("tokenizer: PCRE2 matching failed: " + pcre2_message(rc));
    return true;
}

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(std::string_view text) const {
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    MatchData match(*this);
    for (std::size_t from = 0; from <= text.size() && find(text, from, match.data);) {
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.data);
        matches.emplace_back(ovector[0], ovector[1]);
        from = ovector[1];
        if (ovector[1] == ovector[0]) {  // empty: step over one character
            if (from == text.size()) break;
            do ++from;
            while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80);
        }
    }
    return matches;
}

}  // namespace remat::text::detail
