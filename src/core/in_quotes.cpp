#include "remat/core/in_quotes.hpp"

namespace remat {

namespace {
// The length of the valid UTF-8 sequence starting s[i], or 0 if none starts there (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) low = 0xA0;
        if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) low = 0x90;
        if (c == 0xF4) high = 0x8F;
    } else
        return 0;
    if (i + n > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    return n;
}

// s escaped into out: control bytes and invalid UTF-8 as \xNN, and `"` and `\` too when `quoting`.
void escape(std::string_view s, std::size_t longest, bool quoting, std::string& q) {
    static const char hex[] = "0123456789abcdef";
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : utf8_length(s, i);
        if (i + (n ? n : 1) > longest) break;
        if (quoting && (c == '"' || c == '\\')) {
            q += '\\';
            q += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f || n == 0) {
            q += "\\x";
            q += hex[c >> 4];
            q += hex[c & 15];
        } else {
            q.append(s.data() + i, n);
        }
        i += n ? n : 1;
    }
    if (i < s.size()) q += "...";
}
}  // namespace

std::string in_quotes(std::string_view s, std::size_t longest) {
    std::string q(1, '"');
    escape(s, longest, true, q);
    q += '"';
    return q;
}

std::string printable(std::string_view s, std::size_t longest) {
    std::string out;
    escape(s, longest, false, out);
    return out;
}

}  // namespace remat
