#pragma once
// Template text -> tokens, with jinja2's whitespace rules as HF sets them: trim_blocks (the newline
// after a block or comment tag goes), lstrip_blocks (spaces and tabs before one on its line go), '-'
// and '+' inside the delimiters, newlines normalised to "\n" and one final newline dropped.
#include <string>
#include <string_view>
#include <vector>

namespace remat::text::jinja {

struct Token {
    enum class Kind { data, variable_begin, variable_end, block_begin, block_end, name, string, integer, floating, op, end };
    Kind kind = Kind::end;
    std::string text;  // data, a name, a string's value, a number's digits, an operator
    int line = 1, column = 1;
};

std::vector<Token> lex(std::string_view source);

}  // namespace remat::text::jinja
