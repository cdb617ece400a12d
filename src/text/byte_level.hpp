#pragma once
// GPT-2's byte-level alphabet and the UTF-8 handling around it (private to src/text).
#include <cstdint>
#include <string>
#include <string_view>

namespace remat::text::detail {

// bytes_to_unicode of OpenAI's encoder.py: the printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves, the other 68 for U+0100 onwards in byte order (space is 'Ġ' U+0120). A vocabulary token is
// a string over these 256 characters.
char32_t byte_symbol(std::uint8_t byte);
// The symbol of a byte as UTF-8 ("Ġ" for 0x20).
std::string byte_symbol_utf8(std::uint8_t byte);

// The bytes a token string stands for: each symbol becomes its byte; a character outside the alphabet
// (possible only in hand-written files) stays as its own UTF-8, as tokenizers' ByteLevel decoder keeps it.
// The token must be valid UTF-8.
std::string token_bytes(std::string_view token);
// Whether every character of the token is one of the 256 symbols (tokenizers' ByteLevel decoder keeps a
// token that has any other character as it is, whole).
bool all_byte_symbols(std::string_view token);

void append_utf8(std::string& out, char32_t code_point);

// True when text is well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool is_utf8(std::string_view text);
// The text with each maximal ill-formed subsequence replaced by U+FFFD, as Python's
// bytes.decode("utf-8", errors="replace") does (Unicode's "best practice"): "\xE2\x82A" is "\uFFFDA",
// "\xED\xA0\x80" (an encoded surrogate) is three U+FFFD.
std::string replace_invalid_utf8(std::string_view text);
// The text as a tokenizer reads it (Python has str: whoever read the file decoded it with
// errors="replace"): `text` itself when it is UTF-8, else replace_invalid_utf8(text), kept in `storage`.
std::string_view as_utf8(std::string_view text, std::string& storage);

}  // namespace remat::text::detail
