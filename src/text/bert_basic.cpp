// BasicTokenizer, step for step as transformers' tokenization_bert.py runs it, over code points.
#include "src/text/bert_basic.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>

#include "remat/core/error.hpp"
#include "src/text/byte_level.hpp"

namespace remat::text::detail {

namespace {

using Chars = std::u32string;

Chars decode_utf8(std::string_view text) {  // text is valid UTF-8
    Chars out;
    out.reserve(text.size());
    const auto* s = reinterpret_cast<const std::uint8_t*>(text.data());
    const auto n = static_cast<std::int32_t>(text.size());
    for (std::int32_t i = 0; i < n;) {
        UChar32 c;
        U8_NEXT(s, i, n, c);
        out += static_cast<char32_t>(c);
    }
    return out;
}

std::string encode_utf8(const char32_t* begin, const char32_t* end) {
    std::string out;
    out.reserve(static_cast<std::size_t>(end - begin));
    for (const char32_t* c = begin; c != end; ++c) append_utf8(out, *c);
    return out;
}

std::u16string to_utf16(const Chars& s) {
    std::u16string out;
    out.reserve(s.size());
    for (const char32_t c : s) {
        if (c < 0x10000) {
            out += static_cast<char16_t>(c);
        } else {
            out += static_cast<char16_t>(U16_LEAD(c));
            out += static_cast<char16_t>(U16_TRAIL(c));
        }
    }
    return out;
}

void append_utf16(Chars& out, const char16_t* s, std::int32_t n) {
    for (std::int32_t i = 0; i < n;) {
        UChar32 c;
        U16_NEXT(s, i, n, c);
        out += static_cast<char32_t>(c);
    }
}

bool all_ascii(const Chars& s) {
    return std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; });
}

[[noreturn]] void icu_failed(const char* what, UErrorCode error) {
    throw FormatError(std::string("WordPiece: ICU ") + what + " failed: " + u_errorName(error));
}

// Python's str.lower of one character: the full lowercase mapping ("İ" -> "i̇"), no context.
void append_lower(Chars& out, char32_t c) {
    if (c < 0x80) {
        out += (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
        return;
    }
    char16_t src[2], dst[8];
    std::int32_t n = 0;
    U16_APPEND_UNSAFE(src, n, static_cast<UChar32>(c));
    UErrorCode error = U_ZERO_ERROR;
    const std::int32_t m = u_strToLower(dst, 8, src, n, "", &error);  // "": the root locale, no Turkish i
    if (U_FAILURE(error)) icu_failed("lowercasing", error);
    append_utf16(out, dst, m);
}

Chars normalize(const UNormalizer2* form, const Chars& s) {
    if (all_ascii(s)) return s;
    const std::u16string u = to_utf16(s);
    const auto n = static_cast<std::int32_t>(u.size());
    UErrorCode error = U_ZERO_ERROR;
    std::u16string out(u.size() + 16, u'\0');
    std::int32_t m = unorm2_normalize(form, u.data(), n, out.data(), static_cast<std::int32_t>(out.size()), &error);
    if (error == U_BUFFER_OVERFLOW_ERROR) {
        error = U_ZERO_ERROR;
        out.assign(static_cast<std::size_t>(m), u'\0');
        m = unorm2_normalize(form, u.data(), n, out.data(), m, &error);
    }
    if (U_FAILURE(error)) icu_failed("normalisation", error);
    Chars result;
    result.reserve(static_cast<std::size_t>(m));
    append_utf16(result, out.data(), m);
    return result;
}

const UNormalizer2* instance(const UNormalizer2* (*get)(UErrorCode*)) {
    UErrorCode error = U_ZERO_ERROR;
    const UNormalizer2* form = get(&error);
    if (U_FAILURE(error)) icu_failed("normaliser data", error);
    return form;
}

const UNormalizer2* nfc() {
    static const UNormalizer2* form = instance(unorm2_getNFCInstance);
    return form;
}
const UNormalizer2* nfd() {
    static const UNormalizer2* form = instance(unorm2_getNFDInstance);
    return form;
}

// _is_control: categories C* (Cc, Cf, Co, Cs, Cn), but \t \n \r count as white space.
bool is_control(char32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return false;
    switch (u_charType(static_cast<UChar32>(c))) {
        case U_CONTROL_CHAR:
        case U_FORMAT_CHAR:
        case U_PRIVATE_USE_CHAR:
        case U_SURROGATE:
        case U_UNASSIGNED: return true;
        default: return false;
    }
}

// _is_whitespace
bool is_whitespace(char32_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(static_cast<UChar32>(c)) == U_SPACE_SEPARATOR;
}

// _is_punctuation: all non-letter, non-digit printable ASCII ("^", "$" and "`" are symbols in
// Unicode), and the categories P*.
bool is_punctuation(char32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    switch (u_charType(static_cast<UChar32>(c))) {
        case U_DASH_PUNCTUATION:
        case U_START_PUNCTUATION:
        case U_END_PUNCTUATION:
        case U_CONNECTOR_PUNCTUATION:
        case U_OTHER_PUNCTUATION:
        case U_INITIAL_PUNCTUATION:
        case U_FINAL_PUNCTUATION: return true;
        default: return false;
    }
}

// _is_chinese_char: the CJK Unified Ideographs blocks and their extensions A–E, and the compatibility
// ideographs (not Hangul, Hiragana or Katakana, whose words are written with spaces).
bool is_cjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// _run_strip_accents: NFD, then without the non-spacing marks.
Chars strip_accents(const Chars& word) {
    if (all_ascii(word)) return word;
    Chars out = normalize(nfd(), word);
    std::erase_if(out, [](char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK; });
    return out;
}

// Calls f(begin, end) for each maximal run of code points that are not Python white space.
template <class F>
void for_each_word(const char32_t* begin, const char32_t* end, F f) {
    for (const char32_t* c = begin; c != end;) {
        while (c != end && is_python_space(*c)) ++c;
        const char32_t* start = c;
        while (c != end && !is_python_space(*c)) ++c;
        if (c != start) f(start, c);
    }
}

}  // namespace

bool is_python_space(char32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    const auto direction = u_charDirection(static_cast<UChar32>(c));
    return direction == U_WHITE_SPACE_NEUTRAL || direction == U_BLOCK_SEPARATOR || direction == U_SEGMENT_SEPARATOR ||
           u_charType(static_cast<UChar32>(c)) == U_SPACE_SEPARATOR;
}

void basic_tokenize(std::string_view text, const BasicOptions& options, const std::vector<std::string>& never_split,
                    std::vector<std::string>& words) {
    // PreTrainedTokenizer.tokenize lowercases the text outside special tokens with re.sub over
    // "(.+?)": one code point at a time, so Python's context rule for a final sigma never applies.
    // BasicTokenizer's own token.lower() later finds nothing left to change (lowercasing is stable,
    // and NFC composes lowercase letters into lowercase letters).
    Chars chars;
    if (options.lower) {
        chars.reserve(text.size());
        for (const char32_t c : decode_utf8(text)) append_lower(chars, c);
    } else {
        chars = decode_utf8(text);
    }

    // _clean_text, then _tokenize_chinese_chars.
    Chars cleaned;
    cleaned.reserve(chars.size() + 16);
    for (const char32_t c : chars) {
        if (c == 0 || c == 0xFFFD || is_control(c)) continue;
        if (is_whitespace(c)) {
            cleaned += U' ';
        } else if (options.chinese && is_cjk(c)) {
            cleaned += U' ';
            cleaned += c;
            cleaned += U' ';
        } else {
            cleaned += c;
        }
    }
    // NFC "to prevent treating the same character with different unicode codepoints as different
    // characters", as current transformers does.
    const Chars normalized = normalize(nfc(), cleaned);

    for_each_word(normalized.data(), normalized.data() + normalized.size(), [&](const char32_t* begin, const char32_t* end) {
        std::string word = encode_utf8(begin, end);
        if (std::find(never_split.begin(), never_split.end(), word) != never_split.end()) {
            words.push_back(std::move(word));
            return;
        }
        const Chars stripped = options.strip_accents ? strip_accents(Chars(begin, end)) : Chars(begin, end);
        // _run_split_on_punc; the final whitespace_tokenize(" ".join(...)) drops empty pieces (a word
        // that was only marks).
        const char32_t* run = stripped.data();
        const char32_t* const stop = stripped.data() + stripped.size();
        for (const char32_t* c = run; c != stop; ++c) {
            if (!is_punctuation(*c)) continue;
            for_each_word(run, c, [&](const char32_t* b, const char32_t* e) { words.push_back(encode_utf8(b, e)); });
            words.push_back(encode_utf8(c, c + 1));
            run = c + 1;
        }
        for_each_word(run, stop, [&](const char32_t* b, const char32_t* e) { words.push_back(encode_utf8(b, e)); });
    });
}

}  // namespace remat::text::detail
