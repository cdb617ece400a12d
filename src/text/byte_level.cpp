#include "src/text/byte_level.hpp"

#include <array>

namespace remat::text::detail {

namespace {

constexpr bool printable(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

constexpr std::array<char32_t, 256> byte_to_symbol = [] {
    std::array<char32_t, 256> map{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) map[b] = printable(b) ? static_cast<char32_t>(b) : next++;
    return map;
}();

constexpr std::size_t symbol_range = 256 + 68;  // every symbol is below U+0144
constexpr std::array<std::int16_t, symbol_range> symbol_to_byte = [] {
    std::array<std::int16_t, symbol_range> map{};
    map.fill(-1);
    for (int b = 0; b < 256; ++b) map[byte_to_symbol[b]] = static_cast<std::int16_t>(b);
    return map;
}();

struct Step {
    std::size_t length;  // of the well-formed sequence, or of the maximal ill-formed subsequence
    bool valid;
};

// The UTF-8 sequence starting at text[i]. Second bytes have lead-specific ranges (Unicode Table 3-7):
// they exclude overlong forms (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points above
// U+10FFFF (F4 90..BF).
Step step(std::string_view text, std::size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) return {1, true};
    std::size_t continuations = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        continuations = 1;
    else if (c == 0xE0)
        continuations = 2, low = 0xA0;
    else if (c == 0xED)
        continuations = 2, high = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF)
        continuations = 2;
    else if (c == 0xF0)
        continuations = 3, low = 0x90;
    else if (c == 0xF4)
        continuations = 3, high = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3)
        continuations = 3;
    else
        return {1, false};  // 80..C1, F5..FF never start a sequence
    for (std::size_t k = 1; k <= continuations; ++k) {
        if (i + k >= text.size()) return {k, false};
        const auto d = static_cast<unsigned char>(text[i + k]);
        if (k == 1 ? (d < low || d > high) : (d < 0x80 || d > 0xBF)) return {k, false};
    }
    return {continuations + 1, true};
}

}  // namespace

char32_t byte_symbol(std::uint8_t byte) { return byte_to_symbol[byte]; }

std::string byte_symbol_utf8(std::uint8_t byte) {
    std::string s;
    append_utf8(s, byte_to_symbol[byte]);
    return s;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

namespace {

// The byte of the symbol at token[i], or -1 when the character there is not one; its length in `length`.
int symbol_byte(std::string_view token, std::size_t i, std::size_t& length) {
    const auto [n, valid] = step(token, i);
    length = n;
    char32_t cp = symbol_range;  // none
    if (valid && n == 1)
        cp = static_cast<unsigned char>(token[i]);
    else if (valid && n == 2)  // the whole alphabet is below U+0800
        cp = (static_cast<char32_t>(token[i] & 0x1F) << 6) | static_cast<char32_t>(token[i + 1] & 0x3F);
    return cp < symbol_range ? symbol_to_byte[cp] : -1;
}

}  // namespace

std::string token_bytes(std::string_view token) {
    std::string out;
    for (std::size_t i = 0, length = 0; i < token.size(); i += length) {
        const int b = symbol_byte(token, i, length);
        if (b >= 0)
            out += static_cast<char>(b);
        else
            out.append(token, i, length);
    }
    return out;
}

bool all_byte_symbols(std::string_view token) {
    for (std::size_t i = 0, length = 0; i < token.size(); i += length)
        if (symbol_byte(token, i, length) < 0) return false;
    return true;
}

bool is_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        const Step s = step(text, i);
        if (!s.valid) return false;
        i += s.length;
    }
    return true;
}

std::string replace_invalid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 16);
    for (std::size_t i = 0; i < text.size();) {
        const Step s = step(text, i);
        if (s.valid)
            out.append(text, i, s.length);
        else
            out += "\xEF\xBF\xBD";  // U+FFFD
        i += s.length;
    }
    return out;
}

std::string_view as_utf8(std::string_view text, std::string& storage) {
    if (is_utf8(text)) return text;
    storage = replace_invalid_utf8(text);
    return storage;
}

}  // namespace remat::text::detail
