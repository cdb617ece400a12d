#include <doctest/doctest.h>

#include <string>

#include "remat/core/in_quotes.hpp"

using remat::in_quotes;

TEST_CASE("in_quotes") {
    SUBCASE("plain names as written, in double quotes") {
        CHECK(in_quotes("h.0.attn.c_attn.weight") == "\"h.0.attn.c_attn.weight\"");
        CHECK(in_quotes("") == "\"\"");
    }
    SUBCASE("quotes and backslashes escaped with a backslash") { CHECK(in_quotes("a\"b\\c") == "\"a\\\"b\\\\c\""); }
    SUBCASE("control bytes and DEL as \\xNN") {
        CHECK(in_quotes("os\x01.system") == "\"os\\x01.system\"");
        CHECK(in_quotes(std::string("a\nb\0c\x7f", 6)) == "\"a\\x0ab\\x00c\\x7f\"");
    }
    SUBCASE("valid UTF-8 kept, invalid bytes as \\xNN") {
        CHECK(in_quotes("\xc4\xa0the caf\xc3\xa9") == "\"\xc4\xa0the caf\xc3\xa9\"");
        CHECK(in_quotes("\xff\xc3") == "\"\\xff\\xc3\"");                // a stray byte, a sequence cut short
        CHECK(in_quotes("\xc0\xaf") == "\"\\xc0\\xaf\"");                // overlong "/"
        CHECK(in_quotes("\xed\xa0\x80") == "\"\\xed\\xa0\\x80\"");        // a surrogate
        CHECK(in_quotes("\xf4\x90\x80\x80") == "\"\\xf4\\x90\\x80\\x80\"");  // above U+10FFFF
    }
    SUBCASE("long ones cut, never inside a UTF-8 sequence") {
        CHECK(in_quotes(std::string(300, 'x')) == "\"" + std::string(200, 'x') + "...\"");
        CHECK(in_quotes("abcdef", 3) == "\"abc...\"");
        CHECK(in_quotes("ab\xc3\xa9", 3) == "\"ab...\"");
        CHECK(in_quotes("ab\xc3\xa9", 4) == "\"ab\xc3\xa9\"");
    }
}

TEST_CASE("printable: a whole line made safe for a terminal, quotes and backslashes kept") {
    CHECK(remat::printable("tensor \"a\": shape (2,)") == "tensor \"a\": shape (2,)");
    CHECK(remat::printable("x\x1b[31m\nerror: forged") == "x\\x1b[31m\\x0aerror: forged");
    CHECK(remat::printable("caf\xc3\xa9 \xff end") == "caf\xc3\xa9 \\xff end");  // valid UTF-8 kept, a stray byte escaped
    CHECK(remat::printable("C:\\path") == "C:\\path");
    CHECK(remat::printable(std::string(10, 'a'), 4) == "aaaa...");
}
