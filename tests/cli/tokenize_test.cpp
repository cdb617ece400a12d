// `remat tokenize`: ids as HF's tokenizer(text) gives them (the fixtures' expected.json), --no-special,
// --decode with and without --skip-special, standard input, model folders, and one error line for
// what remat does not read.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_remat.hpp"

using namespace cli_test;
using json = nlohmann::json;

namespace {

const fs::path mistral = fixtures / "tokenizer_json" / "mistral";

}  // namespace

TEST_CASE("tokenize") {
    const fs::path dir = scratch() / "tokenize";
    write_text(dir / "hello.txt", "Hello world");
    SUBCASE("ids with and without the special tokens, from a file or standard input") {
        const Result r = run_remat({"tokenize", mistral.string(), "--text", (dir / "hello.txt").string()});
        CAPTURE(r.err);
        CHECK(r.code == 0);
        CHECK(r.out == "[1,22557,1526]\n");
        CHECK(r.err.empty());
        CHECK(run_remat({"tokenize", mistral.string(), "--no-special"}, "Hello world").out == "[22557,1526]\n");
        CHECK(run_remat({"tokenize", mistral.string(), "-"}, "Hello world").out == "[1,22557,1526]\n");
    }
    SUBCASE("every text of the fixture corpus, as transformers.js and HF's tokenizers encode it") {
        const json expected = json::parse(read_text(mistral / "expected.json"));
        int checked = 0;
        for (const json& c : expected["cases"]) {
            if (++checked > 12) break;  // the library test covers all 220; these go through the command
            const Result r = run_remat({"tokenize", mistral.string()}, c["text"].get<std::string>());
            CAPTURE(c["id"]);
            CHECK(json::parse(r.out) == c["ids"]);
        }
    }
    SUBCASE("--decode prints the text exactly; --skip-special leaves out <s>") {
        CHECK(run_remat({"tokenize", mistral.string(), "--decode"}, "[1, 22557, 1526]").out == "<s> Hello world");
        CHECK(run_remat({"tokenize", mistral.string(), "--decode", "--skip-special"}, "[1, 22557, 1526]").out == "Hello world");
    }
    SUBCASE("a model folder reads its own tokenizer files") {
        const fs::path model = dir / "model";
        const Result init = run_remat({"init", model.string(), "--arch", "mistral", "--num-hidden-layers", "1", "--hidden-size", "8",
                                       "--num-attention-heads", "2", "--num-key-value-heads", "1", "--intermediate-size", "8",
                                       "--vocab-size", "32000", "--max-position-embeddings", "16"});
        REQUIRE_MESSAGE(init.code == 0, init.err);
        fs::copy_file(mistral / "tokenizer.json", model / "tokenizer.json");
        fs::copy_file(mistral / "tokenizer_config.json", model / "tokenizer_config.json");
        CHECK(run_remat({"tokenize", model.string()}, "Hello world").out == "[1,22557,1526]\n");
    }
    SUBCASE("errors: one line") {
        check_error({"tokenize", mistral.string(), "--decode"},
                    "standard input: --decode expects a JSON array of token ids, like [1, 22557, 1526]; not valid JSON: parse error at line 1, "
                    "column 2: syntax error while parsing value - unexpected ','; expected end of input",
                    "1, 2");
        write_text(dir / "bad.json", "[1, \"a\"]");
        check_error({"tokenize", mistral.string(), "--decode", "--text", (dir / "bad.json").string()},
                    (dir / "bad.json").string() + ": --decode expects a JSON array of token ids, like [1, 22557, 1526]; \"a\" is not an integer");
        check_error({"tokenize", mistral.string(), "--decode"}, "decode: token id 32000 is outside the vocabulary [0, 32000)", "[32000]");
        const fs::path lower = dir / "lowercase";
        json tokenizer = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}}},
                          {"normalizer", {{"type", "Lowercase"}}}};
        write_text(lower / "tokenizer.json", tokenizer.dump());
        check_error({"tokenize", lower.string(), "--text", (dir / "hello.txt").string()},
                    (lower / "tokenizer.json").string() + ": normalizer: normalizer \"Lowercase\" is not supported (remat reads NFC, Prepend, Replace and Sequence)");
        check_error({"tokenize", (dir / "nowhere").string()}, (dir / "nowhere").string() + ": not a folder (give a model folder or a tokenizer folder)");
    }
}
