// strict_json: the one JSON reading path (duplicate keys, trailing bytes, NUL, nesting, escaping).
#include <doctest/doctest.h>

#include <string>

#include "remat/core/error.hpp"
#include "src/core/strict_json.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {
std::string refusal(const std::string& text) {
    try {
        (void)strict_json::parse<json>(text, "f.json");
    } catch (const FormatError& e) {
        return e.what();
    }
    return "accepted";
}
std::string deep(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }
}  // namespace

TEST_CASE("strict_json: what nlohmann-json accepts that a file remat reads may not hold") {
    SUBCASE("valid JSON is read as nlohmann reads it") {
        const std::string text = R"({"b": [1, 2.5, "x", null, true], "a": {"c": {}}})";
        CHECK(strict_json::parse<json>(text, "f.json") == json::parse(text));
        const auto ordered = strict_json::parse<ordered_json>(text, "f.json");
        CHECK(ordered == ordered_json::parse(text));
        CHECK(ordered.begin().key() == "b");  // file order kept
        CHECK(strict_json::parse<json>(" \n 7 \t", "f.json") == json(7));
    }
    SUBCASE("duplicate keys at any depth, named with where they are") {
        CHECK(refusal(R"({"a": 1, "a": 2})") == R"(f.json: duplicate key "a")");
        CHECK(refusal(R"({"model": {"vocab": {"x": 1, "y": 2, "x": 3}}})") == R"(f.json: duplicate key "x" in model.vocab)");
        CHECK(refusal(R"({"added": [{"id": 1}, {"id": 2, "id": 3}]})") == R"(f.json: duplicate key "id" in added[1])");
        // The same key in different objects is fine.
        CHECK(strict_json::parse<json>(R"({"a": {"k": 1}, "b": {"k": 2}, "k": 3})", "f.json").size() == 3);
    }
    SUBCASE("nothing after the value: trailing text, a second value, a NUL and garbage") {
        CHECK(refusal("{} x").starts_with("f.json: not valid JSON: parse error at line 1, column 4"));
        CHECK(refusal("{} {}").starts_with("f.json: not valid JSON: parse error"));
        CHECK(refusal(std::string("{\"a\": 1}\0garbage", 16)) == "f.json: not valid JSON: NUL byte at offset 8");
        CHECK(refusal(std::string("{\"a\": \"\0\"}", 10)) == "f.json: not valid JSON: NUL byte at offset 7");
    }
    SUBCASE("nesting: 64 levels are read, deeper is refused while parsing, at any depth") {
        CHECK(strict_json::parse<json>(deep(64), "f.json").is_array());
        CHECK(refusal(deep(65)) == "f.json: nested deeper than 64 levels");
        CHECK(refusal(std::string(1'000'000, '[')) == "f.json: nested deeper than 64 levels");
        std::string objects;
        for (int i = 0; i < 200'000; ++i) objects += R"({"a": )";
        CHECK(refusal(objects) == "f.json: nested deeper than 64 levels");
    }
    SUBCASE("syntax errors and numbers out of range carry the parser's message, without its prefix") {
        CHECK(refusal(R"({"a": 1,})") == "f.json: not valid JSON: parse error at line 1, column 9: syntax error while parsing "
                                         "object key - unexpected '}'; expected string literal");
        CHECK(refusal(R"({"n": 1e400})") == "f.json: not valid JSON: number overflow parsing '1e400'");
        CHECK(refusal("").starts_with("f.json: not valid JSON: parse error at line 1, column 1"));
    }
    SUBCASE("keys from the file are escaped in messages: no control bytes reach a terminal") {
        const std::string message = refusal("{\"ok\": {\"\\u001b[31m\\nerror: forged\": 1, \"\\u001b[31m\\nerror: forged\": 2}}");
        CHECK(message == R"(f.json: duplicate key "\x1b[31m\x0aerror: forged" in ok)");
        CHECK(refusal("{\"\\n\": {\"k\": 1, \"k\": 2}}") == R"(f.json: duplicate key "k" in \x0a)");
    }
}

TEST_CASE("strict_json::read: a bounded regular file, named in every message") {
    const test::TempDir tmp("remat-strict-json");
    const auto good = tmp.write("a.json", R"({"x": [1]})");
    CHECK(strict_json::read<json>(good, 100, "a test file")["x"][0] == 1);
    const auto twice = tmp.write("b.json", R"({"x": 1, "x": 2})");
    CHECK_THROWS_WITH_AS(strict_json::read<json>(twice, 100, "a test file"), (twice.string() + R"(: duplicate key "x")").c_str(),
                         FormatError);
    CHECK_THROWS_WITH_AS(strict_json::read<json>(good, 5, "a test file"),
                         (good.string() + ": is 10 bytes, over the 5-byte limit for a test file").c_str(), FormatError);
}
