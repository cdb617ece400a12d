// `remat template`: a conversation rendered by a folder's chat template exactly as the fixtures'
// jinja2 renders it (chat_template.jinja, or tokenizer_config.json's chat_template as a string or a
// list of named templates, with its special tokens), and one error line for what it cannot render.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_remat.hpp"

using namespace cli_test;
using json = nlohmann::ordered_json;

namespace {
const fs::path templates = fixtures / "chat_templates";

// The fixtures' expected text for a family and conversation.
std::string expected_text(const std::string& family, const std::string& conversation, bool prompt) {
    const json expected = json::parse(read_text(templates / "expected.json"));
    for (const json& c : expected["cases"])
        if (c["family"] == family && c["conversation"] == conversation && c["add_generation_prompt"] == prompt) return c["text"];
    FAIL("no such fixture case");
    return "";
}

json messages_of(const std::string& conversation) {
    const json conversations = json::parse(read_text(templates / "conversations.json"));
    for (const json& c : conversations)
        if (c["name"] == conversation) return c["messages"];
    return nullptr;
}
}  // namespace

TEST_CASE("template") {
    const fs::path dir = scratch() / "template";
    const fs::path chat = dir / "chat.json";
    write_text(chat, messages_of("four_turns_with_system").dump());

    SUBCASE("chat_template.jinja with tokenizer_config.json's special tokens (Llama 3: bos_token)") {
        const fs::path folder = dir / "llama3";
        fs::create_directories(folder);
        fs::copy_file(templates / "llama3.jinja", folder / "chat_template.jinja", fs::copy_options::overwrite_existing);
        json config = json::parse(read_text(templates / "llama3.json"))["special_tokens"];
        config["bos_token"] = json{{"content", config["bos_token"]}, {"lstrip", false}};  // an AddedToken, as many configs write it
        write_text(folder / "tokenizer_config.json", config.dump());
        for (const bool prompt : {false, true}) {
            std::vector<std::string> args{"template", folder.string(), chat.string()};
            if (prompt) args.push_back("--generation-prompt");
            const Result r = run_remat(args);
            CAPTURE(r.err);
            CHECK(r.code == 0);
            std::string text = r.out;
            // Llama 3.1's template prints today's date; the fixtures were rendered on 26 Jul 2024.
            const auto at = text.find("Today Date: ");
            REQUIRE(at != std::string::npos);
            text.replace(at + 12, text.find('\n', at) - at - 12, "26 Jul 2024");
            CHECK(text == expected_text("llama3", "four_turns_with_system", prompt));
        }
    }
    SUBCASE("tokenizer_config.json's chat_template, a string or a list of named templates") {
        const fs::path folder = dir / "qwen";
        fs::create_directories(folder);
        json config = json::parse(read_text(templates / "qwen2.5.json"))["special_tokens"];
        config["chat_template"] = read_text(templates / "qwen2.5.jinja");
        write_text(folder / "tokenizer_config.json", config.dump());
        CHECK(run_remat({"template", folder.string(), chat.string(), "--generation-prompt"}).out ==
              expected_text("qwen2.5", "four_turns_with_system", true));
        config["chat_template"] = json::array({{{"name", "tool_use"}, {"template", "tools"}},
                                               {{"name", "default"}, {"template", read_text(templates / "qwen2.5.jinja")}}});
        write_text(folder / "tokenizer_config.json", config.dump());
        CHECK(run_remat({"template", folder.string(), chat.string()}).out == expected_text("qwen2.5", "four_turns_with_system", false));
        write_text(dir / "object.json", json{{"messages", messages_of("four_turns_with_system")}, {"tools", nullptr}}.dump());
        CHECK(run_remat({"template", folder.string(), (dir / "object.json").string()}).out ==
              expected_text("qwen2.5", "four_turns_with_system", false));
    }
    SUBCASE("errors: one line") {
        const fs::path gemma = dir / "gemma";
        fs::create_directories(gemma);
        fs::copy_file(templates / "gemma.jinja", gemma / "chat_template.jinja", fs::copy_options::overwrite_existing);
        check_error({"template", gemma.string(), chat.string()}, chat.string() + ": the chat template stops: System role not supported");
        check_error({"template", dir.string(), chat.string()},
                    dir.string() + ": no chat template (neither chat_template.jinja nor a chat_template in tokenizer_config.json)");
        write_text(dir / "broken" / "chat_template.jinja", "{% for m in messages %}{{ m.content }");
        check_error({"template", (dir / "broken").string(), chat.string()},
                    (dir / "broken" / "chat_template.jinja").string() + ": chat template line 1, column 24: a variable tag opened at line 1 is never closed");
        write_text(dir / "not.json", "[{\"role\": ");
        check_error({"template", gemma.string(), (dir / "not.json").string()},
                    (dir / "not.json").string() + ": not valid JSON: parse error at line 1, column 11: syntax error while parsing value - unexpected end of "
                                                   "input; expected '[', '{', or a literal (expected a list of messages, [{\"role\": \"user\", \"content\": \"Hi\"}])");
        write_text(dir / "number.json", "3");
        check_error({"template", gemma.string(), (dir / "number.json").string()},
                    (dir / "number.json").string() + ": the chat template stops: a conversation is a list of messages or an object with \"messages\"");
        check_error({"template", gemma.string()}, "MESSAGES is required (see remat template --help)");
    }
}
