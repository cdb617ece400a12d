// Chat templates against Python's jinja2: the public templates of eight model families rendered for
// 18 conversations, with and without the generation prompt, byte for byte as
// tests/fixtures/make_chat_template_fixtures.py rendered them with jinja2 3.1.2 as HF configures it;
// then the language's corners and the refusals.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "remat/text/chat_template.hpp"

using namespace remat;
using text::ChatTemplate;
using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

const fs::path template_fixtures = fs::path(REMAT_FIXTURES) / "chat_templates";

std::string read_fixture(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::tm fixed_now() {  // the fixtures' strftime_now: 26 Jul 2024, 00:00
    std::tm t{};
    t.tm_year = 124;
    t.tm_mon = 6;
    t.tm_mday = 26;
    t.tm_wday = 5;
    t.tm_yday = 207;
    return t;
}

std::string render_snippet(const std::string& source, const ojson& variables = ojson::object()) {
    return ChatTemplate(source).render(variables, {}, fixed_now());
}

}  // namespace

TEST_CASE("chat templates of eight model families render as HF's jinja2 does, byte for byte") {
    const ojson expected = ojson::parse(read_fixture(template_fixtures / "expected.json"));
    std::map<std::string, ojson> conversations;
    for (const ojson& c : ojson::parse(read_fixture(template_fixtures / "conversations.json"))) conversations[c["name"].get<std::string>()] = c;
    std::map<std::string, ChatTemplate> templates;
    std::map<std::string, ojson> tokens;
    for (const ojson& family : expected["families"]) {
        const std::string name = family.get<std::string>();
        templates.emplace(name, ChatTemplate(read_fixture(template_fixtures / (name + ".jinja"))));
        tokens[name] = ojson::parse(read_fixture(template_fixtures / (name + ".json")))["special_tokens"];
    }
    int rendered = 0, refused = 0;
    for (const ojson& c : expected["cases"]) {
        const std::string family = c["family"], conversation = c["conversation"];
        const bool prompt = c["add_generation_prompt"];
        CAPTURE(family);
        CAPTURE(conversation);
        CAPTURE(prompt);
        const ojson& conv = conversations.at(conversation);
        ojson variables = tokens[family];
        variables["messages"] = conv["messages"];
        variables["tools"] = conv.contains("tools") ? conv["tools"] : ojson(nullptr);
        variables["documents"] = nullptr;
        variables["add_generation_prompt"] = prompt;
        if (conv.contains("kwargs"))
            for (const auto& [key, value] : conv["kwargs"].items()) variables[key] = value;
        const ChatTemplate& t = templates.at(family);
        if (c.value("error", false)) {
            std::string message;
            try {
                t.render(variables, {}, fixed_now());
            } catch (const text::TemplateError& e) {
                message = e.what();
            }
            CHECK_FALSE(message.empty());
            if (c.value("from_raise_exception", false)) CHECK(message == c["message"].get<std::string>());
            ++refused;
        } else {
            std::string text;
            CHECK_NOTHROW(text = t.render(variables, {}, fixed_now()));
            CHECK(text == c["text"].get<std::string>());
            ++rendered;
        }
    }
    CHECK(rendered + refused == 288);
    CHECK(refused == 26);
}

TEST_CASE("the language's corners render as jinja2 does (whitespace, loops, scoping, macros, filters, tests, methods, printing)") {
    const ojson snippets = ojson::parse(read_fixture(template_fixtures / "snippets.json"));
    int checked = 0;
    for (const ojson& c : snippets["cases"]) {
        const std::string source = c["template"];
        CAPTURE(source);
        if (c.contains("error")) {
            std::string message;
            try {
                render_snippet(source, c["variables"]);
            } catch (const text::TemplateError& e) {
                message = e.what();
            }
            CHECK(message == c["error"].get<std::string>());
        } else {
            std::string text;
            CHECK_NOTHROW(text = render_snippet(source, c["variables"]));
            CHECK(text == c["text"].get<std::string>());
        }
        ++checked;
    }
    CHECK(checked == 55);
}

namespace {
// The message a template gives when read, or else when rendered with `limits`; "" when it renders.
std::string refusal(const std::string& source, const text::RenderLimits& limits = {}) {
    try {
        ChatTemplate(source).render(ojson::object(), limits, fixed_now());
    } catch (const text::TemplateError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("templates outside the language, or that would not end, are refused with the line and column") {
    SUBCASE("when read") {
        CHECK(refusal("a\n  {% include 'x.jinja' %}") == "line 2, column 6: the statement 'include' is not supported in chat templates");
        CHECK(refusal("{% if x %}abc") == "line 1, column 14: the template ended inside a block: expected '{% endif %}'");
        CHECK(refusal("ok\n{{ x") == "line 2, column 1: a variable tag opened at line 2 is never closed");
        CHECK(refusal("{# never closed") == "line 1, column 1: a comment opened at line 1 is never closed");
        CHECK(refusal("{{ 'open }}") == "line 1, column 4: a string is never closed");
        CHECK(refusal("{% break %}") == "line 1, column 4: 'break' outside a for loop");
        CHECK(refusal("{{ a $ b }}") == "line 1, column 6: unexpected character '$'");
        CHECK(refusal("{% for x in y recursive %}{% endfor %}") == "line 1, column 15: recursive for loops are not supported in chat templates");
        CHECK(refusal("{{ f(*args) }}") == "line 1, column 6: *args and **kwargs are not supported in chat templates");
        CHECK(refusal("{{ " + std::string(1000, '(') + "1" + std::string(1000, ')') + " }}").ends_with("nested more than 256 levels deep"));
        CHECK(refusal("{% if true %}x{% endfor %}") == "line 1, column 18: 'endfor' here does not close an open block");
        CHECK(refusal("{% else %}") == "line 1, column 4: 'else' here does not close an open block");
    }
    SUBCASE("when rendered: what Python would raise, at the expression") {
        CHECK(refusal("{{ 'a' | frobnicate }}") == "line 1, column 8: no filter named 'frobnicate'");
        CHECK(refusal("{{ 1 is frob }}") == "line 1, column 6: no test named 'frob'");
        CHECK(refusal("{{ x + 1 }}") == "line 1, column 6: unsupported operand types for +: 'x' (undefined) and an integer");
        CHECK(refusal("{{ x.y }}") == "line 1, column 5: 'x' (undefined) has no attribute 'y'");
        CHECK(refusal("{{ 'a' + {} }}") == "line 1, column 8: unsupported operand types for +: a string and a dict");
        CHECK(refusal("{% set x = 1 %}{% set x.y = 2 %}") == "line 1, column 19: can only set attributes of a namespace(), not of an integer");
        CHECK(refusal("{% for x in 3 %}{% endfor %}") == "line 1, column 13: an integer is not iterable");
        CHECK(refusal("{{ 1 // 0 }}") == "line 1, column 6: integer division or modulo by zero");
        CHECK(refusal("{{ nothing() }}") == "line 1, column 11: 'nothing' is undefined");
    }
    SUBCASE("bounded: recursion, steps, output and ranges") {
        CHECK(refusal("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").ends_with("macros nested more than 200 calls deep"));
        CHECK(refusal("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", {.steps = 100'000})
                  .ends_with("the template ran more than 100000 steps (a loop or recursion without end?)"));
        CHECK(refusal("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", {.output_bytes = 1 << 20})
                  .ends_with("the rendered text would pass 1048576 bytes"));
        CHECK(refusal("{% macro m() %}{% for i in range(2000) %}{{ 'x' * 1000 }}{% endfor %}{% endmacro %}{{ m() }}", {.output_bytes = 1 << 20})
                  .ends_with("would pass 1048576 bytes"));
        CHECK(refusal("{{ range(1000000) | length }}") == "line 1, column 9: range: more than 100000 items");
        CHECK(refusal("{{ 'x' * 100000000 }}") == "line 1, column 8: a string repeated past 64 MiB");
    }
    SUBCASE("the variables must be an object") {
        CHECK_THROWS_AS(ChatTemplate("x").render(ojson::array(), {}, fixed_now()), text::TemplateError);
    }
}

TEST_CASE("integers are 64-bit: a result past them is refused, not wrapped (found by fuzzing)") {
    CHECK(refusal("{{ 2 ** 62 * 2 }}") == "line 1, column 12: integer overflow in * (integers here are 64-bit)");
    CHECK(refusal("{{ 2 ** 64 }}") == "line 1, column 6: integer overflow in ** (integers here are 64-bit)");
    CHECK(refusal("{{ 9223372036854775807 + 1 }}") == "line 1, column 24: integer overflow in + (integers here are 64-bit)");
    CHECK(refusal("{{ -(-9223372036854775807 - 1) }}").ends_with("integer overflow in unary -"));
    CHECK(render_snippet("{{ 2 ** 62 }} {{ 1 ** 9223372036854775807 }} {{ (-2) ** 63 }} {{ 1e300 | int }} {{ range(9223372036854775806, 9223372036854775807, 5) | list }}") ==
          "4611686018427387904 1 -9223372036854775808 0 [9223372036854775806]");
    CHECK(refusal("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
              .ends_with("~: a string longer than 64 MiB"));
}
