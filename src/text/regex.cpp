#include "src/text/regex.hpp"

#include <optional>

#include "remat/core/error.hpp"
#include "remat/core/in_quotes.hpp"
#include "src/text/newer_unicode.hpp"

namespace remat::text::detail {

namespace {

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    return pcre2_get_error_message(code, buffer, sizeof buffer) < 0 ? "PCRE2 error " + std::to_string(code)
                                                                     : reinterpret_cast<const char*>(buffer);
}

// `written` is the pattern as the file has it, for the message, when `pattern` is its translation (the
// offset PCRE2 gives is then in the translation: not shown).
pcre2_code* compile_code(std::string_view pattern, std::uint32_t options, const std::string& where,
                         std::string_view written = {}) {
    int error = 0;
    PCRE2_SIZE at = 0;
    // PCRE2_LITERAL takes no PCRE2_UCP (nor needs it).
    const std::uint32_t unicode = options & PCRE2_LITERAL ? PCRE2_UTF : PCRE2_UTF | PCRE2_UCP;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), unicode | options, &error, &at, nullptr);
    const bool translated = !written.empty() && written != pattern;
    if (!code)
        throw FormatError(where + ": cannot compile the pattern " + in_quotes(translated ? written : pattern) + ": " +
                          pcre2_message(error) + (translated ? "" : " at offset " + std::to_string(at)));
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT (an error here), pcre2_match interprets
    return code;
}

// \p{NAME} / \P{NAME} (or \pL, \p{^NAME}) at pattern[at], the backslash: its end, name and sense.
struct Property {
    std::size_t end = 0;
    std::string_view name;
    bool negated = false;
};
std::optional<Property> property_at(std::string_view pattern, std::size_t at) {
    if (at + 2 >= pattern.size() || (pattern[at + 1] != 'p' && pattern[at + 1] != 'P')) return std::nullopt;
    Property p;
    p.negated = pattern[at + 1] == 'P';
    if (pattern[at + 2] != '{') {
        p.name = pattern.substr(at + 2, 1);
        p.end = at + 3;
        return p;
    }
    const std::size_t close = pattern.find('}', at + 3);
    if (close == std::string_view::npos) return std::nullopt;  // PCRE2 names the syntax error
    p.name = pattern.substr(at + 3, close - at - 3);
    if (p.name.starts_with('^')) p.name.remove_prefix(1), p.negated = !p.negated;
    p.end = close + 1;
    return p;
}

// A general category with the characters PCRE2's tables lack (src/text/newer_unicode.hpp): inside a
// class its items.
std::string category_items(const GeneralCategory& category) { return "\\p{" + category.pcre2_name + "}" + category.newer; }

std::string as_class(const std::string& items, bool negated) { return (negated ? "[^" : "[") + items + "]"; }

// [items \P{X} \P{Y}] (or [^…]), where \P{X} is written as [^x] with x X's items: PCRE2 has no class
// difference, so it becomes an alternation — (?:[items]|[^x]|[^y]) — or for a negated class the
// complement, (?:(?![items])(?=[x])[y]).
std::string class_with_complements(std::string items, const std::vector<std::string>& complements, bool negated) {
    if (items.starts_with('^')) items = "\\" + items;  // a literal ^, not a negation
    std::string out = "(?:";
    if (!negated) {
        if (!items.empty()) out += as_class(items, false) + "|";
        for (const std::string& c : complements) out += as_class(c, true) + "|";
        out.back() = ')';
        return out;
    }
    if (!items.empty()) out += "(?!" + as_class(items, false) + ")";
    for (std::size_t k = 0; k + 1 < complements.size(); ++k) out += "(?=" + as_class(complements[k], false) + ")";
    return out + as_class(complements.back(), false) + ")";
}

std::string word_items() {
    std::string items;
    for (const char* name : {"L", "M", "N", "Pc"}) items += category_items(*general_category(name));
    return items;
}

}  // namespace

Regex Regex::compile(std::string_view pattern, const std::string& where) {
    return Regex(compile_code(pattern, 0, where), std::string(pattern), where);
}

Regex Regex::literal(std::string_view text, const std::string& where) {
    return Regex(compile_code(text, PCRE2_LITERAL, where), std::string(text), where);
}

Regex Regex::from_oniguruma(std::string_view pattern, const std::string& where) {
    std::string out;
    out.reserve(pattern.size() + 32);
    // The class being read: where its '[' is in `out`, where its items start, whether it is negated, and
    // the negated categories in it that PCRE2's tables cannot spell (\P{L} less the newer letters).
    bool in_class = false, negated_class = false;
    std::size_t class_open = 0, class_items = 0;
    std::vector<std::string> complements;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[++i];
            const auto p = property_at(pattern, i - 1);
            const auto category = p ? general_category(p->name) : std::nullopt;
            if (e == 's')
                out += R"(\p{White_Space})";
            else if (e == 'S')
                out += R"(\P{White_Space})";
            else if (e == 'w')
                out += in_class ? word_items() : as_class(word_items(), false);
            else if (e == 'W' && !in_class)
                out += as_class(word_items(), true);
            else if (e == 'W')
                complements.push_back(word_items());
            else if (category && category->newer.empty())
                out += (p->negated ? "\\P{" : "\\p{") + category->pcre2_name + "}";
            else if (category && !in_class)
                out += as_class(category_items(*category), p->negated);
            else if (category && !p->negated)
                out += category_items(*category);
            else if (category)
                complements.push_back(category_items(*category));
            else
                out += c, out += e;
            if (category) i = p->end - 1;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            class_open = out.size();
            out += c;
            negated_class = i + 1 < pattern.size() && pattern[i + 1] == '^';
            if (negated_class) out += pattern[++i];
            class_items = out.size();
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
        if (in_class && c == ']') {
            in_class = false;
            if (!complements.empty()) {
                out = out.substr(0, class_open) + class_with_complements(out.substr(class_items), complements, negated_class);
                complements.clear();
                continue;
            }
        }
        out += c;
    }
    return Regex(compile_code(out, 0, where, pattern), std::string(pattern), where);  // messages show the pattern as written
}

MatchData::MatchData(const Regex& regex) : data(pcre2_match_data_create_from_pattern(regex.code(), nullptr)) {
    if (!data) throw std::bad_alloc();
}

bool Regex::find(std::string_view text, std::size_t from, pcre2_match_data* match) const {
    // The caller checked the text once; PCRE2 would otherwise re-check all of it on every call.
    const int rc =
        pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from, PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0)
        throw Error(where_ + ": the pattern " + in_quotes(pattern_) + " gives up on a text (PCRE2: " + pcre2_message(rc) +
                    "); a pattern that backtracks this much cannot tokenise it");
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
