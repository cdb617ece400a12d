#include "lexer.hpp"

#include <cstdint>

#include "src/text/byte_level.hpp"
#include "template_error.hpp"

namespace remat::text::jinja {

namespace {

// Python's str.splitlines() + "\n".join(): every line break becomes "\n" and a final one goes
// (jinja2 without keep_trailing_newline).
std::string normalise_newlines(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const auto next = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
        if (c == '\r') {
            if (next(1) == '\n') ++i;
            out += '\n';
        } else if (c == '\n' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e) {
            out += '\n';
        } else if (c == 0xC2 && next(1) == 0x85) {  // U+0085
            out += '\n';
            ++i;
        } else if (c == 0xE2 && next(1) == 0x80 && (next(2) == 0xA8 || next(2) == 0xA9)) {  // U+2028, U+2029
            out += '\n';
            i += 2;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
public:
    explicit Lexer(std::string source) : s_(std::move(source)) {}

    std::vector<Token> run() {
        bool line_starting = true;  // what jinja2 calls it: the last thing consumed ended a line
        while (pos_ < s_.size()) {
            const std::size_t tag = find_tag(pos_);
            std::string text = s_.substr(pos_, tag - pos_);
            const int text_line = line_, text_column = column_;
            advance_to(tag);
            if (tag < s_.size()) {
                const char kind = s_[tag + 1];  // '{', '%' or '#'
                const char control = tag + 2 < s_.size() ? s_[tag + 2] : '\0';
                if (control == '-') {
                    while (!text.empty() && is_space(text.back())) text.pop_back();
                } else if (control != '+' && kind != '{') {  // lstrip_blocks
                    const std::size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
                    if (line_start > 0 || line_starting) {
                        std::size_t k = line_start;
                        while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\v' || text[k] == '\f' || text[k] == '\r')) ++k;
                        if (k == text.size()) text.erase(line_start);
                    }
                }
            }
            if (!text.empty()) tokens_.push_back({Token::Kind::data, std::move(text), text_line, text_column});
            if (tag >= s_.size()) break;
            const std::string consumed_end = read_tag();
            line_starting = !consumed_end.empty() && consumed_end.back() == '\n';
        }
        tokens_.push_back({Token::Kind::end, "", line_, column_});
        return std::move(tokens_);
    }

private:
    [[noreturn]] void fail(const std::string& why) const { fail_at(line_, column_, why); }
    [[noreturn]] static void fail_at(int line, int column, const std::string& why) {
        throw TemplateError("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + why);
    }

    std::size_t find_tag(std::size_t from) const {
        for (std::size_t i = from; i + 1 < s_.size(); ++i)
            if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
        return s_.size();
    }

    void advance_to(std::size_t to) {
        for (; pos_ < to; ++pos_) {
            if (s_[pos_] == '\n') {
                ++line_;
                column_ = 1;
            } else if ((static_cast<unsigned char>(s_[pos_]) & 0xC0) != 0x80) {
                ++column_;
            }
        }
    }

    bool at(std::string_view what) const { return s_.compare(pos_, what.size(), what) == 0; }

    // Reads one tag from its opening delimiter; returns the text its end consumed (delimiter and the
    // whitespace or newline it takes), for line_starting.
    std::string read_tag() {
        const char kind = s_[pos_ + 1];
        const int line = line_, column = column_;
        advance_to(pos_ + 2);
        if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) advance_to(pos_ + 1);
        if (kind == '#') {
            const std::size_t end = s_.find("#}", pos_);
            if (end == std::string::npos) fail_at(line, column, "a comment opened at line " + std::to_string(line) + " is never closed");
            const bool dash = end > pos_ && s_[end - 1] == '-', plus = end > pos_ && s_[end - 1] == '+';
            advance_to(end + 2);
            return finish_end("#}", dash, plus, true);
        }
        const bool block = kind == '%';
        tokens_.push_back({block ? Token::Kind::block_begin : Token::Kind::variable_begin, "", line, column});
        int depth = 0;  // open brackets: an end delimiter inside them is an operator, as in jinja2
        for (;;) {
            while (pos_ < s_.size() && is_space(s_[pos_])) advance_to(pos_ + 1);
            if (pos_ >= s_.size())
                fail_at(line, column, std::string("a ") + (block ? "block tag" : "variable tag") + " opened at line " +
                                          std::to_string(line) + " is never closed");
            if (depth == 0) {
                const char* close = block ? "%}" : "}}";
                for (const char control : {'-', '+', '\0'}) {
                    if (control == '+' && !block) continue;
                    const std::string end = control ? std::string(1, control) + close : std::string(close);
                    if (at(end)) {
                        tokens_.push_back({block ? Token::Kind::block_end : Token::Kind::variable_end, "", line_, column_});
                        advance_to(pos_ + end.size());
                        return finish_end(close, control == '-', control == '+', block);
                    }
                }
            }
            read_token(depth);
        }
    }

    // After an end delimiter: '-' takes the whitespace that follows; trim_blocks takes one newline
    // after a block or comment tag unless '+'.
    std::string finish_end(const char* close, bool dash, bool plus, bool trims) {
        std::string consumed = close;
        if (dash) {
            while (pos_ < s_.size() && is_space(s_[pos_])) {
                consumed += s_[pos_];
                advance_to(pos_ + 1);
            }
        } else if (trims && !plus && pos_ < s_.size() && s_[pos_] == '\n') {
            consumed += '\n';
            advance_to(pos_ + 1);
        }
        return consumed;
    }

    void read_token(int& depth) {
        const int line = line_, column = column_;
        const char c = s_[pos_];
        if (is_name_start(c)) {
            std::size_t end = pos_;
            while (end < s_.size() && (is_name_start(s_[end]) || is_digit(s_[end]))) ++end;
            tokens_.push_back({Token::Kind::name, s_.substr(pos_, end - pos_), line, column});
            advance_to(end);
        } else if (is_digit(c)) {
            std::size_t end = pos_;
            bool floating = false;
            while (end < s_.size() && (is_digit(s_[end]) || s_[end] == '_')) ++end;
            if (end + 1 < s_.size() && s_[end] == '.' && is_digit(s_[end + 1])) {
                floating = true;
                ++end;
                while (end < s_.size() && (is_digit(s_[end]) || s_[end] == '_')) ++end;
            }
            if (end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
                std::size_t k = end + 1;
                if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
                if (k < s_.size() && is_digit(s_[k])) {
                    floating = true;
                    end = k;
                    while (end < s_.size() && is_digit(s_[end])) ++end;
                }
            }
            std::string digits;
            for (std::size_t k = pos_; k < end; ++k)
                if (s_[k] != '_') digits += s_[k];
            tokens_.push_back({floating ? Token::Kind::floating : Token::Kind::integer, digits, line, column});
            advance_to(end);
        } else if (c == '\'' || c == '"') {
            tokens_.push_back({Token::Kind::string, read_string(c), line, column});
        } else {
            static const char* const ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                              "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|"};
            for (const char* op : ops) {
                if (at(op)) {
                    const std::string text = op;
                    if (text == "(" || text == "[" || text == "{") ++depth;
                    if ((text == ")" || text == "]" || text == "}") && depth > 0) --depth;
                    tokens_.push_back({Token::Kind::op, text, line, column});
                    advance_to(pos_ + text.size());
                    return;
                }
            }
            fail(std::string("unexpected character '") + c + "'");
        }
    }

    // A quoted string with Python's escapes; the position is at the opening quote.
    std::string read_string(char quote) {
        const int line = line_, column = column_;
        std::string out;
        std::size_t i = pos_ + 1;
        const auto hex = [&](std::size_t at, int n) -> long {
            if (at + static_cast<std::size_t>(n) > s_.size()) return -1;
            long v = 0;
            for (int k = 0; k < n; ++k) {
                const char h = s_[at + static_cast<std::size_t>(k)];
                const int d = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
                if (d < 0) return -1;
                v = v * 16 + d;
            }
            return v;
        };
        for (;;) {
            if (i >= s_.size()) {
                line_ = line;
                column_ = column;
                fail("a string is never closed");
            }
            const char c = s_[i];
            if (c == quote) break;
            if (c != '\\' || i + 1 >= s_.size()) {
                out += c;
                ++i;
                continue;
            }
            const char e = s_[i + 1];
            i += 2;
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case '0': out += '\0'; break;
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'v': out += '\v'; break;
                case '\\': out += '\\'; break;
                case '\'': out += '\''; break;
                case '"': out += '"'; break;
                case '\n': break;  // a line continuation
                case 'x':
                case 'u':
                case 'U': {
                    const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    const long v = hex(i, n);
                    if (v < 0 || v > 0x10FFFF) fail(std::string("a bad \\") + e + " escape in a string");
                    detail::append_utf8(out, static_cast<char32_t>(v));
                    i += static_cast<std::size_t>(n);
                    break;
                }
                default: out += '\\'; out += e;  // Python keeps unknown escapes as they are
            }
        }
        advance_to(i + 1);
        return out;
    }

    std::string s_;
    std::size_t pos_ = 0;
    int line_ = 1, column_ = 1;
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(normalise_newlines(source)).run(); }

}  // namespace remat::text::jinja
