#include "src/text/safe_cut.hpp"

#include <algorithm>

namespace remat::text::detail {

namespace {

bool is_ascii_space(unsigned char b) { return b == ' ' || (b >= 0x09 && b <= 0x0D); }

// Unicode White_Space beyond ASCII, and a few neighbours (U+180E, which PCRE2's \s counts, zero-width
// spaces, U+FEFF): never cutting after one of them costs nothing and needs no table.
bool is_wide_space(char32_t c) {
    return c == 0x85 || c == 0xA0 || c == 0x1680 || c == 0x180E || (c >= 0x2000 && c <= 0x200D) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x2060 || c == 0x3000 || c == 0xFEFF;
}

// Whether the bytes before `end` finish a character that is certainly not whitespace: a printable ASCII
// byte, or a well-formed multi-byte character outside the list above. Anything else (ASCII controls,
// bytes that are not UTF-8) answers no, which only costs a cut.
bool ends_with_non_space(std::string_view text, std::size_t end) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char last = byte(end - 1);
    if (last < 0x80) return last >= 0x21 && last <= 0x7E;
    std::size_t start = end - 1;
    while (start > 0 && end - start < 4 && (byte(start) & 0xC0) == 0x80) --start;
    const unsigned char lead = byte(start);
    const std::size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead < 0xE0 ? 2 : 0;
    if (length != end - start) return false;
    char32_t c = lead & (0x7F >> length);
    for (std::size_t i = start + 1; i < end; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return false;
        c = (c << 6) | (byte(i) & 0x3F);
    }
    const bool overlong = (length == 3 && c < 0x800) || (length == 4 && c < 0x10000);
    if (overlong || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
    return !is_wide_space(c);
}

}  // namespace

// A cut at p, before ASCII whitespace and after a character c that is not whitespace, is where GPT-2's
// regex ends a piece in the whole text, and the pieces before it come out the same without what follows:
// - no branch matches c followed by whitespace (' ?\p{L}+' and its kin allow a space only in front, the
//   contractions hold none, the \s branches hold no c), so the piece holding c ends at p;
// - the pieces before p were decided by bytes before p: the lookahead (?!\S) only ever looks one
//   character past a run of whitespace, and c ends that run at the latest; greedy runs stop at p either
//   way, because whitespace joins none of the runs c can be in;
// - the pattern looks behind nothing, so the pieces from p on are those of text[p, end) alone.
// Added tokens are split out first, so no occurrence may span p. Invalid UTF-8 becomes U+FFFD per
// maximal ill-formed subsequence, and none spans an ASCII byte, so the repair of the halves is the
// repair of the whole. BPE works piece by piece. tests/text/safe_cut_test.cpp checks random cuts.
std::size_t gpt2_last_safe_cut(std::string_view text, const std::vector<AddedToken>& added) {
    // Only an added token with ASCII whitespace after its first byte can span p ("<|endoftext|>" cannot);
    // one that began before p must end inside `text` for us to see whether it does.
    std::vector<std::string_view> spanning;
    std::size_t longest = 1;
    for (const AddedToken& t : added)
        if (t.content.find_first_of(" \t\n\v\f\r", 1) != std::string::npos) {
            spanning.push_back(t.content);
            longest = std::max(longest, t.content.size());
        }
    if (text.size() < longest) return 0;
    for (std::size_t p = std::min(text.size(), text.size() - longest + 2); p-- > 1;) {  // text[p] exists and p + longest - 1 <= size
        if (!is_ascii_space(static_cast<unsigned char>(text[p])) || !ends_with_non_space(text, p)) continue;
        bool spanned = false;
        for (const std::string_view content : spanning) {
            const std::size_t n = content.size();
            const std::size_t from = p >= n - 1 ? p - (n - 1) : 0;
            const std::size_t at = text.substr(from, p - from + n - 1).find(content);
            if (at != std::string_view::npos && from + at < p) spanned = true;
        }
        if (!spanned) return p;
    }
    return 0;
}

}  // namespace remat::text::detail
