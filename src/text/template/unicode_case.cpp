#include "unicode_case.hpp"

#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include <vector>

namespace remat::text::jinja {

namespace {

// A string's code points, with -1 standing for a byte that is not UTF-8 (kept as it is).
struct Point {
    UChar32 c;
    std::string_view bytes;
};
std::vector<Point> points(std::string_view s) {
    std::vector<Point> out;
    const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
    const auto n = static_cast<std::int32_t>(s.size());
    for (std::int32_t i = 0; i < n;) {
        const std::int32_t start = i;
        UChar32 c;
        U8_NEXT(p, i, n, c);
        out.push_back({c, s.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(i - start))});
    }
    return out;
}

enum class Case { upper, lower, title };

// One code point's full mapping (ß → SS, ǆ → ǅ), context-free: ICU's root locale, as Python's.
void append_mapped(std::string& out, const Point& p, Case to) {
    if (p.c < 0) {
        out += p.bytes;
        return;
    }
    UChar in[2], mapped[8];
    std::int32_t length = 0;
    U16_APPEND_UNSAFE(in, length, p.c);
    UErrorCode status = U_ZERO_ERROR;
    const std::int32_t n = to == Case::upper ? u_strToUpper(mapped, 8, in, length, "", &status)
                           : to == Case::lower ? u_strToLower(mapped, 8, in, length, "", &status)
                                               : u_strToTitle(mapped, 8, in, length, nullptr, "", &status);
    if (U_FAILURE(status)) {
        out += p.bytes;
        return;
    }
    char utf8[32];
    std::int32_t written = 0;
    status = U_ZERO_ERROR;
    u_strToUTF8(utf8, sizeof utf8, &written, mapped, n, &status);
    out.append(U_SUCCESS(status) ? std::string_view(utf8, static_cast<std::size_t>(written)) : p.bytes);
}

bool cased(UChar32 c) { return c >= 0 && u_hasBinaryProperty(c, UCHAR_CASED); }
bool case_ignorable(UChar32 c) { return c >= 0 && u_hasBinaryProperty(c, UCHAR_CASE_IGNORABLE); }

// Python's final sigma: Σ lowers to ς after a cased letter and before none (case-ignorable ones skipped).
bool final_sigma(const std::vector<Point>& s, std::size_t i) {
    std::size_t j = i;
    while (j > 0 && case_ignorable(s[j - 1].c)) --j;
    if (j == 0 || !cased(s[j - 1].c)) return false;
    j = i + 1;
    while (j < s.size() && case_ignorable(s[j].c)) ++j;
    return j == s.size() || !cased(s[j].c);
}

void append_lower(std::string& out, const std::vector<Point>& s, std::size_t i) {
    if (s[i].c == 0x03A3 && final_sigma(s, i))
        out += "\u03C2";
    else
        append_mapped(out, s[i], Case::lower);
}

bool python_space(UChar32 c) {  // Python's str.isspace: bidirectional WS, B or S, or category Zs
    if (c < 0) return false;
    const auto direction = u_charDirection(c);
    return direction == U_WHITE_SPACE_NEUTRAL || direction == U_BLOCK_SEPARATOR || direction == U_SEGMENT_SEPARATOR ||
           u_charType(c) == U_SPACE_SEPARATOR;
}

}  // namespace

std::string unicode_upper(std::string_view text) {
    std::string out;
    for (const Point& p : points(text)) append_mapped(out, p, Case::upper);
    return out;
}

std::string unicode_lower(std::string_view text) {
    const auto s = points(text);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) append_lower(out, s, i);
    return out;
}

std::string unicode_capitalize(std::string_view text) {
    const auto s = points(text);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) i == 0 ? append_mapped(out, s[i], Case::title) : append_lower(out, s, i);
    return out;
}

std::string unicode_title(std::string_view text) {
    const auto s = points(text);
    std::string out;
    bool previous_cased = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        previous_cased ? append_lower(out, s, i) : append_mapped(out, s[i], Case::title);
        previous_cased = cased(s[i].c);
    }
    return out;
}

std::string jinja_title(std::string_view text) {
    // "".join(item[0].upper() + item[1:].lower() for item in re.split(r"([-\s({\[<]+)", s) if item)
    const auto s = points(text);
    auto separator = [](UChar32 c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || python_space(c); };
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t end = i;
        const bool between = separator(s[i].c);
        while (end < s.size() && separator(s[end].c) == between) ++end;
        // Each piece is its own string to Python: a final sigma is judged within the word.
        const std::vector<Point> piece(s.begin() + static_cast<std::ptrdiff_t>(i), s.begin() + static_cast<std::ptrdiff_t>(end));
        for (std::size_t k = 0; k < piece.size(); ++k) k == 0 ? append_mapped(out, piece[k], Case::upper) : append_lower(out, piece, k);
        i = end;
    }
    return out;
}

bool unicode_is(std::string_view method, std::string_view text) {
    const auto s = points(text);
    if (s.empty()) return false;
    bool any_cased = false;
    for (const Point& p : s) {
        const UChar32 c = p.c;
        const bool lower = c >= 0 && u_hasBinaryProperty(c, UCHAR_LOWERCASE);
        const bool upper = c >= 0 && u_hasBinaryProperty(c, UCHAR_UPPERCASE);
        const bool title = c >= 0 && u_charType(c) == U_TITLECASE_LETTER;
        if (method == "isupper") {
            if (lower || title) return false;
            any_cased = any_cased || upper;
        } else if (method == "islower") {
            if (upper || title) return false;
            any_cased = any_cased || lower;
        } else if (method == "isalpha") {
            const auto type = c < 0 ? U_UNASSIGNED : static_cast<UCharCategory>(u_charType(c));
            if (type != U_UPPERCASE_LETTER && type != U_LOWERCASE_LETTER && type != U_TITLECASE_LETTER &&
                type != U_MODIFIER_LETTER && type != U_OTHER_LETTER)
                return false;
        } else if (method == "isdigit") {
            const auto kind = c < 0 ? U_NT_NONE : u_getIntPropertyValue(c, UCHAR_NUMERIC_TYPE);
            if (kind != U_NT_DECIMAL && kind != U_NT_DIGIT) return false;
        } else if (!python_space(c)) {  // isspace
            return false;
        }
    }
    return method == "isupper" || method == "islower" ? any_cased : true;
}

}  // namespace remat::text::jinja
