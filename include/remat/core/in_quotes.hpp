#pragma once
// Quoting a name or value that came from outside (a tensor name, a JSON key, a token, a pickle
// global) for a message, one way everywhere.
#include <cstddef>
#include <string>
#include <string_view>

namespace remat {

// s in double quotes, safe to print whatever it holds:
//   - `"` and `\` are escaped with a backslash: \" and \\;
//   - control bytes (below 0x20, and 0x7f) and bytes that are not part of valid UTF-8 are written
//     as \xNN (two lower-case hex digits); valid UTF-8 such as "Ġthe" or "é" is kept as it is;
//   - more than `longest` bytes are cut (never inside a UTF-8 sequence) and "..." marks the cut,
//     inside the quotes: a hostile file may hold megabytes in one name.
// in_quotes("h.0.attn") is "\"h.0.attn\""; in_quotes("os\x01.system") is "\"os\\x01.system\"".
std::string in_quotes(std::string_view s, std::size_t longest = 200);

// s made safe for a terminal and valid UTF-8, otherwise as it is (no quotes, `"` and `\` kept):
// control bytes and bytes that are not part of valid UTF-8 as \xNN, cut after `longest` bytes with
// "...". The last line of defence for whole messages and listings; names inside messages are quoted
// by in_quotes.
std::string printable(std::string_view s, std::size_t longest = static_cast<std::size_t>(-1));

}  // namespace remat
