// `remat generate`: streamed text equal to the --json text, greedy by default and deterministic with a
// seed, generation_config.json read and overridden by flags, the context limit, and one error line for
// each bad request.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_remat.hpp"

using namespace cli_test;
using json = nlohmann::json;

namespace {

// A small GPT-2 with the 577-token GPT-2-style tokenizer of tests/fixtures/tokenizer, 32 positions.
fs::path tiny_model() {
    const fs::path dir = scratch() / "generate-model";
    if (fs::exists(dir / "config.json")) return dir;
    const Result init = run_remat({"init", dir.string(), "--arch", "gpt2", "--n-layer", "2", "--n-embd", "16", "--n-head", "2",
                                   "--vocab-size", "577", "--n-positions", "32", "--seed", "3"});
    REQUIRE_MESSAGE(init.code == 0, init.err);
    for (const char* f : {"vocab.json", "merges.txt"}) fs::copy_file(fixtures / "tokenizer" / f, dir / f);
    return dir;
}

json generate_json(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"generate", tiny_model().string(), "--prompt", "It's the model's text", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = run_remat(args);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    return json::parse(r.out);
}

}  // namespace

TEST_CASE("generate") {
    const fs::path model = tiny_model();
    SUBCASE("greedy by default; the streamed text is the JSON's; stats on stderr") {
        const json j = generate_json({"--max-new-tokens", "6"});
        CHECK(j["prompt_ids"].size() > 0);
        CHECK(j["generated_ids"].size() <= 6);
        CHECK(j["kv_cache_bytes"].get<std::size_t>() > 0);
        CHECK(generate_json({"--max-new-tokens", "6"})["generated_ids"] == j["generated_ids"]);
        const Result r = run_remat({"generate", model.string(), "--prompt", "It's the model's text", "--max-new-tokens", "6"});
        CHECK(r.code == 0);
        CHECK(r.out == j["text"].get<std::string>() + "\n");
        CHECK(r.err.find("prompt " + std::to_string(j["prompt_ids"].size()) + " tokens, generated ") == 0);
    }
    SUBCASE("--stop ends the generation once the text holds it") {
        const json free = generate_json({"--max-new-tokens", "10"});
        const std::string text = free["text"];
        if (text.size() >= 2) {  // the tiny model's greedy text: stop at its second character
            const json j = generate_json({"--max-new-tokens", "10", "--stop", text.substr(1, 1)});
            CHECK(j["stopped_by"] == "stop");
            CHECK(j["text"].get<std::string>().find(text.substr(1, 1)) != std::string::npos);
            CHECK(j["generated_ids"].size() <= free["generated_ids"].size());
        }
    }
    SUBCASE("--prompt-file reads the prompt from a file") {
        write_text(scratch() / "prompt.txt", "It's the model's text");
        const Result r = run_remat({"generate", model.string(), "--prompt-file", (scratch() / "prompt.txt").string(), "--max-new-tokens", "6", "--json"});
        REQUIRE(r.code == 0);
        CHECK(json::parse(r.out)["generated_ids"] == generate_json({"--max-new-tokens", "6"})["generated_ids"]);
        write_text(scratch() / "empty.txt", "");
        check_error({"generate", model.string(), "--prompt-file", (scratch() / "empty.txt").string()},
                    (scratch() / "empty.txt").string() + ": the prompt is empty");
    }
    SUBCASE("--chat: the conversation through the folder's chat template, tokenised as rendered") {
        write_text(scratch() / "chat.json", R"([{"role": "user", "content": "It's the model's text"}])");
        check_error({"generate", model.string(), "--chat", (scratch() / "chat.json").string()},
                    model.string() + ": no chat template (neither chat_template.jinja nor a chat_template in tokenizer_config.json)");
        write_text(model / "chat_template.jinja",
                   "{% for m in messages %}<{{ m.role }}>: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<assistant>:{% endif %}");
        const Result rendered = run_remat({"template", model.string(), (scratch() / "chat.json").string(), "--generation-prompt"});
        REQUIRE(rendered.code == 0);
        CHECK(rendered.out == "<user>: It's the model's text\n<assistant>:");
        const Result ids = run_remat({"tokenize", model.string(), "--no-special"}, rendered.out);
        const Result r = run_remat({"generate", model.string(), "--chat", (scratch() / "chat.json").string(), "--max-new-tokens", "4", "--json"});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(json::parse(r.out)["prompt_ids"] == json::parse(ids.out));
        check_error({"generate", model.string(), "--chat", (scratch() / "chat.json").string(), "--prompt", "x"},
                    "--prompt excludes --chat (see remat generate --help)");
        fs::remove(model / "chat_template.jinja");
    }
    SUBCASE("sampling: the same seed, the same tokens") {
        const json a = generate_json({"--max-new-tokens", "8", "--temperature", "1.5", "--seed", "4"});
        CHECK(generate_json({"--max-new-tokens", "8", "--temperature", "1.5", "--seed", "4"})["generated_ids"] == a["generated_ids"]);
    }
    SUBCASE("generation_config.json gives the defaults, flags override them") {
        write_text(model / "generation_config.json", R"({"max_new_tokens": 3, "eos_token_id": 9999})");
        CHECK(generate_json({})["generated_ids"].size() == 3);
        CHECK(generate_json({"--max-new-tokens", "5"})["generated_ids"].size() == 5);
        fs::remove(model / "generation_config.json");
    }
    SUBCASE("the context ends generation with a warning") {
        const Result r = run_remat({"generate", model.string(), "--prompt", "It's the model's text", "--max-new-tokens", "100", "--json"});
        CHECK(r.code == 0);
        const json j = json::parse(r.out);
        if (j["stopped_by"] == "context") {
            CHECK(j["prompt_ids"].size() + j["generated_ids"].size() == 33);  // 32 positions, and the last token is never fed
            CHECK(r.err == "warning: generation stopped at the model's context of 32 positions\n");
        } else {
            CHECK(j["stopped_by"] == "eos");
        }
    }
    SUBCASE("bad requests: one error line") {
        check_error({"generate", model.string()}, "give the text to continue: --prompt TEXT, --prompt-file F or --chat MESSAGES.json");
        check_error({"generate", model.string(), "--prompt", ""}, "--prompt is empty");
        check_error({"generate", model.string(), "--prompt", "x", "--top-p", "1.5"}, "--top-p must be in (0, 1], got 1.5");
        check_error({"generate", model.string(), "--prompt", "x", "--max-new-tokens", "0"},
                    "--max-new-tokens must be a whole number from 1 to 16777216, got \"0\"");
        std::string long_prompt;
        for (int i = 0; i < 40; ++i) long_prompt += " word";
        const Result r = run_remat({"generate", model.string(), "--prompt", long_prompt});
        CHECK(r.code == 2);
        CHECK(r.err.find("error: --prompt: the prompt is ") == 0);
        CHECK(r.err.find("longer than the model's context of 32 positions") != std::string::npos);
    }
}
