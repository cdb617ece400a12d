// Hostile text through the command line (issue 35): malformed tokenizer.json and tokenizer_config.json
// through `remat tokenize` and `remat encode`, `remat generate`'s flags, prompts and
// generation_config.json, and the texts and outputs of `tokenize` and `encode` (NUL bytes, invalid
// UTF-8, long lines, outputs that are inputs, a full disk). Every refusal, as docs/reliability.md
// ("What every refusal looks like") says: exit code 2, no signal, stdout empty, stderr `warning:` lines
// and exactly one `error:` line of at most 4096 bytes of valid UTF-8 naming the file, field or flag and
// the value, within seconds, with remat under a 1 GiB address-space limit, and every file in the
// folders involved byte-identical afterwards (no temporary, nothing partial). Where HF's tokenizers
// accept an input (invalid UTF-8 text, a NUL byte, ids with gaps), the accepted behaviour is asserted.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "remat/core/in_quotes.hpp"
#include "remat/data/token_file.hpp"
#include "tests/cli/run_remat.hpp"

using namespace remat;
using namespace cli_test;
using Json = nlohmann::ordered_json;

namespace {

const ChildMemoryLimit one_gib(rlim_t{1} << 30);

// 577 tokens of GPT-2's byte-level BPE (ByteLevel pre-tokenizer and decoder, <|endoftext|> = 576);
// 9 KB, so each load costs nothing.
const fs::path small_tokenizer = fixtures / "tokenizer" / "tokenizer.json";
const std::vector<std::int64_t> hello_ids{39, 68, 265, 78, 401, 305};  // "Hello world" through it

fs::path place(const std::string& name) {
    const fs::path dir = scratch() / "hostile-text" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}
fs::path text_file(const std::string& name, const std::string& bytes) {
    const fs::path p = scratch() / "hostile-text" / "texts" / name;
    write_text(p, bytes);
    return p;
}
const fs::path& hello() {
    static const fs::path p = text_file("hello.txt", "Hello world");
    return p;
}

std::string joined(const std::vector<std::string>& args) {
    std::string s = "remat";
    for (const auto& a : args) s += " " + (a.size() > 80 ? a.substr(0, 80) + "..." : a);
    return s;
}

// Every entry below `dir`: a regular file by its bytes, a symlink by its target, anything else by
// kind, so that a changed byte, a new temporary or a removed file all show.
using Snapshot = std::map<std::string, std::string>;
Snapshot snapshot(const fs::path& dir) {
    Snapshot s;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const std::string name = fs::relative(e.path(), dir).string();
        if (e.is_symlink())
            s[name] = "symlink to " + fs::read_symlink(e.path()).string();
        else if (e.is_regular_file())
            s[name] = read_text(e.path());
        else
            s[name] = e.is_directory() ? "(folder)" : "(special file)";
    }
    return s;
}

struct Timed {
    Result r;
    double seconds = 0;
};
Timed timed_run(const std::vector<std::string>& args, const std::optional<std::string>& input = std::nullopt) {
    const auto start = std::chrono::steady_clock::now();
    Result r = run_remat(args, input);
    return {std::move(r), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// The one `error:` line of a refusal's stderr (its text without "error: "), after checking that the
// other lines are warnings; "" when there is not exactly one.
std::string the_error_line(const std::string& err) {
    CHECK(err.ends_with("\n"));
    std::vector<std::string> errors;
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("error: "))
            errors.push_back(line.substr(7));
        else
            CHECK_MESSAGE(line.starts_with("warning: "), "a stderr line that is neither a warning nor the error: " << line);
    }
    CHECK(errors.size() == 1);
    return errors.size() == 1 ? errors[0] : "";
}

// The refusal contract. `names`: what the error line must contain (the file, field or flag, and the
// value); `watched`: folders whose every file must be unchanged afterwards.
void refused(const std::vector<std::string>& args, const std::vector<std::string>& names, const std::vector<fs::path>& watched = {},
             double within_seconds = 10, const std::optional<std::string>& input = std::nullopt) {
    std::vector<Snapshot> before;
    for (const fs::path& w : watched) before.push_back(snapshot(w));
    const Timed t = timed_run(args, input);
    INFO(joined(args));
    CAPTURE(t.r.err);
    CHECK(t.r.code == 2);
    CHECK(t.r.out.empty());
    CHECK(t.seconds < within_seconds);
    const std::string line = the_error_line(t.r.err);
    CHECK(line.size() + 8 <= 4096);
    CHECK(printable(line) == line);  // valid UTF-8, no control bytes
    for (const std::string& name : names) CHECK_MESSAGE(line.find(name) != std::string::npos, "the error line does not name " << name);
    for (std::size_t i = 0; i < watched.size(); ++i) CHECK_MESSAGE(snapshot(watched[i]) == before[i], watched[i].string() << " changed");
}

// An input remat is right to take: exit code 0 within the time, no error line.
Result accepted(const std::vector<std::string>& args, double within_seconds = 10, const std::optional<std::string>& input = std::nullopt) {
    const Timed t = timed_run(args, input);
    INFO(joined(args));
    CAPTURE(t.r.err);
    CHECK(t.r.code == 0);
    CHECK(t.seconds < within_seconds);
    CHECK(t.r.err.find("error: ") == std::string::npos);
    return t.r;
}

std::vector<std::int64_t> ids_in(const std::string& out) {
    const auto j = nlohmann::json::parse(out, nullptr, false);
    REQUIRE(j.is_array());
    return j.get<std::vector<std::int64_t>>();
}
std::vector<std::int64_t> tokenize(const fs::path& dir, const fs::path& text, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"tokenize", dir.string(), text.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return ids_in(accepted(args).out);
}
std::vector<std::int64_t> tokens_of(const fs::path& token_file) {
    const data::TokenFile f = data::TokenFile::open(token_file);
    std::vector<std::int64_t> ids(f.tokens());
    f.read(0, ids.size(), ids.data());
    return ids;
}

// A folder holding the small tokenizer.json with `edit` applied.
fs::path tokenizer_with(const std::string& name, const std::function<void(Json&)>& edit) {
    static const Json base = Json::parse(read_text(small_tokenizer));
    const fs::path dir = place(name);
    Json t = base;
    edit(t);
    write_text(dir / "tokenizer.json", t.dump());
    return dir;
}
fs::path tokenizer_text(const std::string& name, const std::string& text) {
    const fs::path dir = place(name);
    write_text(dir / "tokenizer.json", text);
    return dir;
}
// A pre-tokenizer of one Split by `pattern` ({"Regex": ...} or {"String": ...}), then bytes to symbols.
void split_by(Json& t, const Json& pattern) {
    t["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "Split"}, {"pattern", pattern}, {"behavior", "Isolated"}, {"invert", false}},
                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
}

// The small tokenizer with a LlamaTokenizerFast tokenizer_config.json (bos <|endoftext|>, add_bos_token
// true: transformers rebuilds the post-processor from the two), `edit` applied to the config.
fs::path config_with(const std::string& name, const std::function<void(Json&)>& edit) {
    const fs::path dir = place(name);
    fs::copy_file(small_tokenizer, dir / "tokenizer.json");
    Json config = {{"tokenizer_class", "LlamaTokenizerFast"},
                   {"bos_token", "<|endoftext|>"},
                   {"eos_token", "<|endoftext|>"},
                   {"add_bos_token", true},
                   {"add_eos_token", false}};
    edit(config);
    write_text(dir / "tokenizer_config.json", config.dump());
    return dir;
}
fs::path config_text(const std::string& name, const std::string& text) {
    const fs::path dir = place(name);
    fs::copy_file(small_tokenizer, dir / "tokenizer.json");
    write_text(dir / "tokenizer_config.json", text);
    return dir;
}

// A GPT-2 of 577 tokens and 32 positions with the small tokenizer: a model folder for generate.
fs::path generate_model(const std::string& name) {
    const fs::path dir = scratch() / "hostile-text" / name;
    if (fs::exists(dir / "tokenizer.json")) return dir;
    const Result init = run_remat({"init", dir.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                                   "--vocab-size", "577", "--n-positions", "32", "--seed", "3"});
    REQUIRE_MESSAGE(init.code == 0, init.err);
    fs::copy_file(small_tokenizer, dir / "tokenizer.json");
    return dir;
}

// A file of `size` NUL bytes that takes no disk space, in a folder of its own: snapshot() would read it.
fs::path sparse_file(const std::string& name, std::uintmax_t size) {
    const fs::path p = place("sparse") / name;
    std::ofstream(p.string(), std::ios::binary).close();
    fs::resize_file(p, size);
    return p;
}

const std::string deep_array = std::string(100000, '[') + std::string(100000, ']');

}  // namespace

TEST_CASE("tokenizer.json that HF's tokenizers would not load, or remat does not read: one error line naming the file, path and value") {
    const auto path = [](const fs::path& dir) { return (dir / "tokenizer.json").string(); };
    // Each case: its folder, then what the error line must name besides the file.
    const std::vector<std::pair<fs::path, std::vector<std::string>>> cases = {
        // merges naming tokens the vocabulary lacks, or whose result it lacks (tokenizers refuses both)
        {tokenizer_with("merge-unknown-left", [](Json& t) { t["model"]["merges"].push_back("zzz Ġ"); }),
         {"model.merges[320]", "\"zzz\"", "not in model.vocab"}},
        {tokenizer_with("merge-unknown-right", [](Json& t) { t["model"]["merges"].push_back(Json::array({"Ġ", "zzz"})); }),
         {"model.merges[320]", "\"zzz\""}},
        {tokenizer_with("merge-unknown-result", [](Json& t) { t["model"]["merges"].push_back("q x"); }), {"model.merges[320]", "\"qx\""}},
        {tokenizer_with("merge-three", [](Json& t) { t["model"]["merges"].push_back("a b c"); }), {"model.merges[320]", "\"a b c\""}},
        {tokenizer_with("merge-one", [](Json& t) { t["model"]["merges"].push_back(Json::array({"a"})); }),
         {"model.merges[320]", "[\"a\"]"}},
        // wrong JSON types
        {tokenizer_with("merge-number", [](Json& t) { t["model"]["merges"].push_back(7); }), {"model.merges[320]", "7"}},
        {tokenizer_with("merges-object", [](Json& t) { t["model"]["merges"] = {{"a", "b"}}; }), {"model.merges", "{\"a\":\"b\"}"}},
        {tokenizer_with("vocab-id-string", [](Json& t) { t["model"]["vocab"]["he"] = "300"; }), {"model.vocab", "\"300\"", "\"he\""}},
        {tokenizer_with("vocab-id-fraction", [](Json& t) { t["model"]["vocab"]["he"] = 300.5; }), {"model.vocab", "300.5", "\"he\""}},
        {tokenizer_with("vocab-array", [](Json& t) { t["model"]["vocab"] = Json::array({Json::array({"a", 1})}); }), {"model.vocab"}},
        {tokenizer_with("model-type-number", [](Json& t) { t["model"]["type"] = 5; }), {": model", "\"type\""}},
        {tokenizer_with("model-string", [](Json& t) { t["model"] = "BPE"; }), {"\"model\""}},
        {tokenizer_with("added-id-string", [](Json& t) { t["added_tokens"][0]["id"] = "576"; }), {"added_tokens[0]", "\"576\""}},
        {tokenizer_with("added-content-number", [](Json& t) { t["added_tokens"][0]["content"] = 576; }),
         {"added_tokens[0]", "\"content\""}},
        {tokenizer_with("added-special-string", [](Json& t) { t["added_tokens"][0]["special"] = "yes"; }),
         {"added_tokens[0]", "special", "\"yes\""}},
        {tokenizer_with("added-tokens-object", [](Json& t) { t["added_tokens"] = {{"id", 576}}; }), {"added_tokens"}},
        {tokenizer_with("byte-fallback-string", [](Json& t) { t["model"]["byte_fallback"] = "false"; }), {"byte_fallback", "\"false\""}},
        {tokenizer_with("unk-token-number", [](Json& t) { t["model"]["unk_token"] = 5; }), {"unk_token", "5"}},
        {tokenizer_with("unk-token-unknown", [](Json& t) { t["model"]["unk_token"] = "<nope>"; }), {"unk_token", "\"<nope>\""}},
        {tokenizer_with("dropout-half", [](Json& t) { t["model"]["dropout"] = 0.5; }), {"dropout", "0.5"}},
        {tokenizer_with("pre-tokenizer-string", [](Json& t) { t["pre_tokenizer"] = "ByteLevel"; }), {"pre_tokenizer", "\"ByteLevel\""}},
        {tokenizer_with("metaspace-two-characters",
                        [](Json& t) {
                            t["pre_tokenizer"] = {
                                {"type", "Metaspace"}, {"replacement", "ab"}, {"prepend_scheme", "always"}, {"split", true}};
                        }),
         {"pre_tokenizer", "replacement", "\"ab\""}},
        // duplicate ids: two tokens, or an added token and a vocabulary token, with one id
        {tokenizer_with("vocab-duplicate-id", [](Json& t) { t["model"]["vocab"]["he"] = t["model"]["vocab"]["Ġt"]; }),
         {"model.vocab", "\"he\"", "256"}},
        {tokenizer_with("added-duplicate-id",
                        [](Json& t) {
                            Json other = t["added_tokens"][0];
                            other["content"] = "<|other|>";
                            t["added_tokens"].push_back(other);
                        }),
         {"added_tokens[1]", "\"<|other|>\"", "576"}},
        {tokenizer_with("added-id-disagrees", [](Json& t) { t["added_tokens"][0]["id"] = 5; }), {"added_tokens[0]", "5", "576"}},
        // huge and negative ids (tokenizers reads ids as u32)
        {tokenizer_with("vocab-id-2e40", [](Json& t) { t["model"]["vocab"]["zzz"] = std::int64_t{1} << 40; }),
         {"model.vocab", "1099511627776", "\"zzz\""}},
        {tokenizer_with("vocab-id-2e31", [](Json& t) { t["model"]["vocab"]["zzz"] = std::int64_t{1} << 31; }),
         {"model.vocab", "2147483648"}},
        {tokenizer_with("vocab-id-negative", [](Json& t) { t["model"]["vocab"]["zzz"] = -1; }), {"model.vocab", "-1", "\"zzz\""}},
        {tokenizer_with("added-id-2e40",
                        [](Json& t) {
                            Json big = t["added_tokens"][0];
                            big["content"] = "<|x|>";
                            big["id"] = std::int64_t{1} << 40;
                            t["added_tokens"].push_back(big);
                        }),
         {"added_tokens[1]", "1099511627776"}},
        {tokenizer_with("added-id-negative",
                        [](Json& t) {
                            Json negative = t["added_tokens"][0];
                            negative["content"] = "<|x|>";
                            negative["id"] = -3;
                            t["added_tokens"].push_back(negative);
                        }),
         {"added_tokens[1]", "-3"}},
        {tokenizer_with("post-processor-id-2e40",
                        [](Json& t) {
                            t["post_processor"] = {
                                {"type", "TemplateProcessing"},
                                {"single",
                                 {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                                {"pair", Json::array()},
                                {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {std::int64_t{1} << 40}}, {"tokens", {"<s>"}}}}}}};
                        }),
         {"post_processor", "1099511627776"}},
        // components remat does not read
        {tokenizer_with("normalizer-unknown", [](Json& t) { t["normalizer"] = {{"type", "Frobnicate"}}; }),
         {"normalizer", "\"Frobnicate\""}},
        {tokenizer_with("pre-tokenizer-unknown", [](Json& t) { t["pre_tokenizer"] = {{"type", "Frobnicate"}}; }),
         {"pre_tokenizer", "\"Frobnicate\""}},
        {tokenizer_with("decoder-unknown", [](Json& t) { t["decoder"] = {{"type", "Frobnicate"}}; }), {"decoder", "\"Frobnicate\""}},
        {tokenizer_with("post-processor-unknown", [](Json& t) { t["post_processor"] = {{"type", "Frobnicate"}}; }),
         {"post_processor", "\"Frobnicate\""}},
        {tokenizer_with("normalizer-without-type", [](Json& t) { t["normalizer"] = Json::object(); }), {"normalizer", "\"type\""}},
        {tokenizer_with("normalizer-type-number", [](Json& t) { t["normalizer"] = {{"type", 3}}; }), {"normalizer", "{\"type\":3}"}},
        // patterns that do not compile, or match nothing
        {tokenizer_with("regex-unbalanced", [](Json& t) { split_by(t, {{"Regex", "(a+"}}); }), {"pattern", "\"(a+\""}},
        {tokenizer_with("regex-lookbehind", [](Json& t) { split_by(t, {{"Regex", "(?<=a+)b"}}); }), {"pattern", "\"(?<=a+)b\""}},
        {tokenizer_with("split-empty-string", [](Json& t) { split_by(t, {{"String", ""}}); }), {"pattern", "empty"}},
        // nesting 100000 deep, refused while parsing (before, nlohmann's recursion overflowed the stack)
        {tokenizer_text("deep-normalizer",
                        R"({"version": "1.0", "normalizer": )" + deep_array + R"(, "model": {"type": "BPE", "vocab": {}, "merges": []}})"),
         {"nested deeper than 64 levels"}},
        {tokenizer_text("deep-model", R"({"version": "1.0", "model": )" + [] {
             std::string deep;
             for (int i = 0; i < 100000; ++i) deep += R"({"a": )";
             return deep + "1" + std::string(100000, '}');
         }() + "}"),
         {"nested deeper than 64 levels"}},
        // not a tokenizer.json at all
        {tokenizer_text("empty", ""), {"not valid JSON"}},
        {tokenizer_text("truncated", R"({"model": )"), {"not valid JSON"}},
        {tokenizer_text("top-level-array", "[]"), {"[]"}},
        {tokenizer_text("nul-byte", read_text(small_tokenizer) + std::string("\0garbage", 8)), {"NUL byte"}},
        {tokenizer_text("duplicate-key", R"({"model": {"type": "BPE"}, "model": {"type": "BPE"}})"), {"duplicate key \"model\""}},
        {tokenizer_with("no-model", [](Json& t) { t.erase("model"); }), {"\"model\""}},
    };
    for (const auto& [dir, names] : cases) {
        const auto shown = dir;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        std::vector<std::string> all{path(dir)};
        all.insert(all.end(), names.begin(), names.end());
        refused({"tokenize", dir.string(), hello().string()}, all, {dir, hello().parent_path()});
    }
    // encode refuses the same files with the same line, before writing anything.
    for (const char* name : {"merge-unknown-result", "vocab-id-2e40", "deep-normalizer", "added-duplicate-id"}) {
        const fs::path dir = scratch() / "hostile-text" / name;
        const auto shown = dir;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        refused({"encode", dir.string(), hello().string(), "-o", (dir / "out.tok").string()}, {path(dir)}, {dir, hello().parent_path()});
    }
}

TEST_CASE("tokenizer.json with gaps in its ids: read as HF reads it, but a model needs an embedding for every id") {
    // Ids 0..576 and 5000 ("zzz"): tokenizers takes a vocabulary with gaps.
    const fs::path sparse = tokenizer_with("sparse-vocab", [](Json& t) { t["model"]["vocab"]["zzz"] = 5000; });
    SUBCASE("tokenize and --decode") {
        CHECK(tokenize(sparse, hello()) == hello_ids);
        const fs::path top = text_file("id-5000.json", "[5000]"), gap = text_file("id-4000.json", "[4000]");
        CHECK(accepted({"tokenize", sparse.string(), "--decode", "--text", top.string()}).out == "zzz");
        // HF's decode leaves out an id no token has; remat's is an error naming it (docs/tokenizer.md).
        refused({"tokenize", sparse.string(), "--decode", "--text", gap.string()}, {"4000"});
    }
    SUBCASE("a model of 577 ids cannot embed id 5000: refused naming the tokenizer and both sizes") {
        const fs::path small = generate_model("sparse-small-model");
        fs::copy_file(sparse / "tokenizer.json", small / "tokenizer.json", fs::copy_options::overwrite_existing);
        refused({"encode", small.string(), hello().string(), "-o", (small / "out.tok").string()},
                {(small / "tokenizer.json").string(), "5000", "577"}, {small});
        refused({"generate", small.string(), "--prompt", "Hello"}, {(small / "tokenizer.json").string(), "5000", "577"}, {small});
    }
    SUBCASE("generated ids in a gap: refused up front or decoded as HF does, never an error mid-stream") {
        // A model of 5001 ids generates ids no token has: either the folder is refused up front
        // (naming tokenizer.json), or generation completes and those ids decode to nothing, as HF's
        // decode does; not "decode: no token has id 4730" from the middle of the stream.
        const fs::path wide = scratch() / "hostile-text" / "sparse-wide-model";
        if (!fs::exists(wide / "tokenizer.json")) {
            REQUIRE(run_remat({"init", wide.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "8", "--n-head", "2", "--vocab-size",
                               "5001", "--n-positions", "32", "--seed", "3"}).code == 0);
            fs::copy_file(sparse / "tokenizer.json", wide / "tokenizer.json");
        }
        const Timed t = timed_run({"generate", wide.string(), "--prompt", "Hello", "--max-new-tokens", "4", "--json"});
        CAPTURE(t.r.err);
        if (t.r.code == 0) {
            CHECK(nlohmann::json::parse(t.r.out)["generated_ids"].size() == 4);
        } else {
            CHECK(t.r.code == 2);
            CHECK(t.r.out.empty());
            CHECK(the_error_line(t.r.err).find((wide / "tokenizer.json").string()) != std::string::npos);
        }
    }
}

TEST_CASE("a pre-tokenizer or normalizer pattern that backtracks catastrophically: refused within seconds, naming the pattern") {
    // (a+)+$ over "aaa...ab" tries 2^n ways; PCRE2's match limit stops it. The refusal must say which
    // file and pattern (it said only "tokenizer: PCRE2 matching failed: match limit exceeded").
    const fs::path texts = hello().parent_path();
    const fs::path short_run = text_file("a30.txt", std::string(30, 'a') + "b");
    const fs::path long_run = text_file("a5000.txt", std::string(5000, 'a') + "b");
    SUBCASE("(a+)+$ in a Split pre-tokenizer, through tokenize and encode") {
        const fs::path nested = tokenizer_with("regex-nested-plus", [](Json& t) { split_by(t, {{"Regex", "(a+)+$"}}); });
        for (const fs::path& text : {short_run, long_run})
            refused({"tokenize", nested.string(), text.string()}, {(nested / "tokenizer.json").string(), "(a+)+$"}, {nested, texts}, 5);
        refused({"encode", nested.string(), long_run.string(), "-o", (nested / "out.tok").string()},
                {(nested / "tokenizer.json").string(), "(a+)+$"}, {nested, texts}, 5);
    }
    SUBCASE("(a+)+$ in a Replace normalizer") {
        const fs::path replace = tokenizer_with("regex-replace", [](Json& t) {
            t["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"content", "b"}};
        });
        refused({"tokenize", replace.string(), long_run.string()}, {(replace / "tokenizer.json").string(), "(a+)+$"}, {replace, texts}, 5);
    }
    SUBCASE("(a|a)*b: PCRE2's JIT stack runs out first") {
        const fs::path alternatives = tokenizer_with("regex-alternatives", [](Json& t) { split_by(t, {{"Regex", "(a|a)*b"}}); });
        refused({"tokenize", alternatives.string(), long_run.string()}, {(alternatives / "tokenizer.json").string(), "(a|a)*b"},
                {alternatives, texts}, 5);
    }
    SUBCASE("a pattern matching the empty string everywhere ends, each character its own piece") {
        // As HF's Split: empty matches are boundaries, empty pieces are dropped.
        const fs::path empty = tokenizer_with("regex-empty", [](Json& t) { split_by(t, {{"Regex", ""}}); });
        CHECK(tokenize(empty, hello()).size() == std::string("Hello world").size());
        CHECK(tokenize(empty, long_run).size() == 5001);
    }
}

TEST_CASE("tokenizer_config.json of wrong types: one error line naming the file, the key and the value") {
    const auto path = [](const fs::path& dir) { return (dir / "tokenizer_config.json").string(); };
    const std::vector<std::pair<fs::path, std::vector<std::string>>> cases = {
        {config_with("bos-number", [](Json& c) { c["bos_token"] = 5; }), {"bos_token", "5"}},
        {config_with("bos-list", [](Json& c) { c["bos_token"] = Json::array({"<s>"}); }), {"bos_token", "[\"<s>\"]"}},
        {config_with("bos-content-number", [](Json& c) { c["bos_token"] = {{"content", 5}}; }), {"bos_token", "{\"content\":5}"}},
        {config_with("bos-unknown", [](Json& c) { c["bos_token"] = "<nope>"; }), {"bos_token", "\"<nope>\""}},
        {config_with("bos-null", [](Json& c) { c["bos_token"] = nullptr; }), {"add_bos_token", "bos_token"}},
        {config_with("eos-number", [](Json& c) { c["eos_token"] = 2; }), {"eos_token", "2"}},
        {config_with("eos-unknown", [](Json& c) { c["eos_token"] = "<nope>"; }), {"eos_token", "\"<nope>\""}},
        {config_with("add-bos-string", [](Json& c) { c["add_bos_token"] = "true"; }), {"add_bos_token", "\"true\""}},
        {config_with("add-bos-number", [](Json& c) { c["add_bos_token"] = 1; }), {"add_bos_token", "1"}},
        {config_with("add-eos-string", [](Json& c) { c["add_eos_token"] = "no"; }), {"add_eos_token", "\"no\""}},
        {config_with("clean-up-string", [](Json& c) { c["clean_up_tokenization_spaces"] = "false"; }),
         {"clean_up_tokenization_spaces", "\"false\""}},
        {config_with("class-number", [](Json& c) { c["tokenizer_class"] = 7; }), {"tokenizer_class", "7"}},
        {config_text("config-array", "[]"), {"[]"}},
        {config_text("config-empty", ""), {"not valid JSON"}},
        {config_text("config-duplicate", R"({"bos_token": "<s>", "bos_token": "</s>"})"), {"duplicate key \"bos_token\""}},
        {config_text("config-nul", std::string("{}\0x", 4)), {"NUL byte"}},
        {config_text("config-deep", R"({"bos_token": )" + deep_array + "}"), {"nested deeper than 64 levels"}},
    };
    for (const auto& [dir, names] : cases) {
        const auto shown = dir;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        std::vector<std::string> all{path(dir)};
        all.insert(all.end(), names.begin(), names.end());
        refused({"tokenize", dir.string(), hello().string()}, all, {dir, hello().parent_path()});
    }
    // encode refuses them with the same line, before writing anything.
    const fs::path bos_number = scratch() / "hostile-text" / "bos-number";
    refused({"encode", bos_number.string(), hello().string(), "-o", (bos_number / "out.tok").string()},
            {path(bos_number), "bos_token", "5"}, {bos_number});

    // What transformers accepts: add_bos_token null is the default (true); a token as an AddedToken object.
    std::vector<std::int64_t> with_bos{576};
    with_bos.insert(with_bos.end(), hello_ids.begin(), hello_ids.end());
    CHECK(tokenize(config_with("add-bos-null", [](Json& c) { c["add_bos_token"] = nullptr; }), hello()) == with_bos);
    CHECK(tokenize(config_with("bos-object", [](Json& c) { c["bos_token"] = {{"content", "<|endoftext|>"}, {"__type", "AddedToken"}}; }),
                   hello()) == with_bos);
}

TEST_CASE("generate: flags out of range, one error line naming the flag and the value") {
    const fs::path model = generate_model("generate-model");
    const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
        {{"--max-new-tokens", "0"}, {"--max-new-tokens", "\"0\""}},
        {{"--max-new-tokens", "-1"}, {"--max-new-tokens", "\"-1\""}},
        {{"--max-new-tokens", "1e12"}, {"--max-new-tokens", "\"1e12\""}},
        {{"--max-new-tokens", "1000000000000"}, {"--max-new-tokens", "\"1000000000000\""}},
        {{"--temperature", "-1"}, {"--temperature", "\"-1\""}},
        {{"--temperature", "nan"}, {"--temperature", "\"nan\""}},
        {{"--temperature", "inf"}, {"--temperature", "\"inf\""}},
        {{"--temperature", "-inf"}, {"--temperature", "\"-inf\""}},
        {{"--temperature", "1e300"}, {"--temperature 1e300", "out of the range of a 32-bit float"}},  // not "must be at least 0"
        {{"--repetition-penalty", "1e-300"}, {"--repetition-penalty 1e-300", "out of the range of a 32-bit float"}},
        {{"--top-p", "0"}, {"--top-p", "0"}},
        {{"--top-p", "1.5"}, {"--top-p", "1.5"}},
        {{"--top-p", "nan"}, {"--top-p", "nan"}},
        {{"--top-p", "-0.1"}, {"--top-p", "-0.1"}},
        {{"--top-k", "-1"}, {"--top-k", "\"-1\""}},
        {{"--top-k", "1000000000000"}, {"--top-k", "\"1000000000000\""}},
        {{"--repetition-penalty", "0"}, {"--repetition-penalty", "\"0\""}},
        {{"--repetition-penalty", "-1"}, {"--repetition-penalty", "\"-1\""}},
        {{"--repetition-penalty", "nan"}, {"--repetition-penalty", "\"nan\""}},
        {{"--seed", "-1"}, {"--seed", "\"-1\""}},
    };
    for (const auto& [flags, names] : cases) {
        std::vector<std::string> args{"generate", model.string(), "--prompt", "Hello"};
        args.insert(args.end(), flags.begin(), flags.end());
        refused(args, names, {model});
    }
    // A top-k above the vocabulary keeps every token (HF clamps it); a max-new-tokens within the flag's
    // bound stops at the context with a warning, its KV cache capped by the context.
    accepted({"generate", model.string(), "--prompt", "Hello", "--temperature", "1", "--top-k", "16777216", "--max-new-tokens", "3"});
    const Result r = accepted({"generate", model.string(), "--prompt", "Hello", "--max-new-tokens", "16777216", "--json"});
    CHECK(r.err == "warning: generation stopped at the model's context of 32 positions\n");
    CHECK(nlohmann::json::parse(r.out)["stopped_by"] == "context");
}

TEST_CASE("generate: prompts past the context, prompt files that are not files, odd bytes and stop strings") {
    const fs::path model = generate_model("generate-model");
    const fs::path dir = place("prompts");
    SUBCASE("the context of 32 positions: a prompt of 32 tokens gets one new token, longer ones are refused") {
        const Result at_limit = accepted({"generate", model.string(), "--prompt", std::string(32, 'a'), "--json"});
        CHECK(nlohmann::json::parse(at_limit.out)["generated_ids"].size() == 1);
        refused({"generate", model.string(), "--prompt", std::string(33, 'a')}, {"33 tokens", "context of 32 positions"}, {model});
        // 2 MiB: tokenised first (about 50 bytes of memory per byte of text), then refused.
        std::string words;
        while (words.size() < (std::size_t{2} << 20)) words += "whale sea ship ";
        write_text(dir / "long.txt", words);
        refused({"generate", model.string(), "--prompt-file", (dir / "long.txt").string()}, {"tokens", "context of 32 positions"},
                {model, dir});
    }
    SUBCASE("--prompt-file missing, a folder, a FIFO, a device, over 16 MiB") {
        refused({"generate", model.string(), "--prompt-file", (dir / "missing.txt").string()}, {(dir / "missing.txt").string()},
                {model, dir});
        fs::create_directory(dir / "folder");
        refused({"generate", model.string(), "--prompt-file", (dir / "folder").string()}, {(dir / "folder").string(), "folder"},
                {model, dir});
        REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
        refused({"generate", model.string(), "--prompt-file", (dir / "fifo").string()}, {(dir / "fifo").string(), "FIFO"}, {model, dir});
        refused({"generate", model.string(), "--prompt-file", "/dev/zero"}, {"/dev/zero", "character device"}, {model});
        // Refused by its size, unread.
        const fs::path huge = sparse_file("huge.txt", (std::uintmax_t{1} << 30) + 1);
        refused({"generate", model.string(), "--prompt-file", huge.string()}, {huge.string(), "16777216"}, {model, dir});
    }
    SUBCASE("a 16 MB prompt file, within the 16 MiB, that cannot be tokenised in 1 GiB: the refusal names it") {
        // 16 MB of NUL bytes; it was "error: out of memory".
        if (!memory_can_be_limited) return;
        const fs::path nuls = sparse_file("nuls.txt", 16000000);
        refused({"generate", model.string(), "--prompt-file", nuls.string()}, {nuls.string()}, {model, dir});
    }
    SUBCASE("bytes that are not UTF-8 become U+FFFD; a NUL byte is a character") {
        // As HF's tokenizer gets them from open(errors="replace").
        const auto prompt_ids = [&](const std::vector<std::string>& prompt) {
            std::vector<std::string> args{"generate", model.string(), "--max-new-tokens", "2", "--json"};
            args.insert(args.end(), prompt.begin(), prompt.end());
            return nlohmann::json::parse(accepted(args).out)["prompt_ids"].get<std::vector<std::int64_t>>();
        };
        CHECK(prompt_ids({"--prompt", "caf\xe9 \xff"}) == tokenize(model, text_file("repaired.txt", "caf\xEF\xBF\xBD \xEF\xBF\xBD")));
        write_text(dir / "nul.txt", std::string("a\0b", 3));
        CHECK(prompt_ids({"--prompt-file", (dir / "nul.txt").string()}) == tokenize(model, dir / "nul.txt"));
    }
    SUBCASE("stop strings the text never holds, stop ids no token has: generation runs to its length") {
        // HF checks eos_token_id against the vocabulary no more than this.
        for (const std::string& stop : std::vector<std::string>{"\xff\xfe", std::string(40, 'z') + "\x1b[31m"}) {
            const Result r = accepted({"generate", model.string(), "--prompt", "Hello", "--max-new-tokens", "3", "--stop", stop, "--json"});
            CHECK(nlohmann::json::parse(r.out)["stopped_by"] == "length");
        }
        for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"}) fs::copy_file(model / f, dir / f);
        for (const std::string eos : {"577", "1099511627776", "[577, 9999]"}) {
            write_text(dir / "generation_config.json", R"({"eos_token_id": )" + eos + "}");
            const Result r = accepted({"generate", dir.string(), "--prompt", "Hello", "--max-new-tokens", "3", "--json"});
            CHECK(nlohmann::json::parse(r.out)["stopped_by"] == "length");
        }
    }
    SUBCASE("an empty --stop is refused") {
        // "" is in every text: it ended every generation after one token, as "stop".
        refused({"generate", model.string(), "--prompt", "Hello", "--stop", ""}, {"--stop", "empty"}, {model});
    }
}

TEST_CASE("generate: generation_config.json out of range, refused as the flags are, naming the file") {
    const fs::path model = generate_model("generate-model");
    const fs::path dir = place("generate-config");
    for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"}) fs::copy_file(model / f, dir / f);
    const std::string config = (dir / "generation_config.json").string();
    const auto check_all = [&](const std::vector<std::pair<std::string, std::vector<std::string>>>& cases) {
        for (const auto& [text, names] : cases) {
            const auto shown = text.substr(0, 60);  // clang 14: no lambda (CAPTURE) captures a structured binding
            CAPTURE(shown);
            write_text(dir / "generation_config.json", text);
            std::vector<std::string> all{config};
            all.insert(all.end(), names.begin(), names.end());
            refused({"generate", dir.string(), "--prompt", "Hello"}, all, {dir});
        }
    };
    SUBCASE("a repetition penalty of 0 or below, which HF refuses and --repetition-penalty refuses") {
        // HF's RepetitionPenaltyLogitsProcessor: "`penalty` has to be a strictly positive float".
        check_all({{R"({"repetition_penalty": 0})", {"repetition_penalty", "0"}},
                   {R"({"repetition_penalty": -1})", {"repetition_penalty", "-1"}}});
    }
    SUBCASE("sampling values out of range: the line names generation_config.json") {
        check_all({{R"({"do_sample": true, "temperature": -1})", {"temperature", "-1"}},
                   {R"({"do_sample": true, "temperature": 0})", {"temperature", "0"}},
                   {R"({"do_sample": true, "top_p": 5})", {"top_p", "5"}},
                   {R"({"do_sample": true, "top_p": 0})", {"top_p", "0"}},
                   {R"({"max_new_tokens": 0})", {"max_new_tokens", "0"}}});
    }
    SUBCASE("wrong types, negative ids, duplicate keys, deep nesting") {
        check_all({{R"({"max_new_tokens": -3})", {"max_new_tokens", "-3"}},
                   {R"({"eos_token_id": -1})", {"eos_token_id", "-1"}},
                   {R"({"eos_token_id": [1, "a"]})", {"eos_token_id", "\"a\""}},
                   {R"({"do_sample": true, "temperature": "hot"})", {"temperature", "\"hot\""}},
                   {R"({"do_sample": "yes"})", {"do_sample", "\"yes\""}},
                   {R"({"eos_token_id": 1, "eos_token_id": 2})", {"duplicate key \"eos_token_id\""}},
                   {R"({"top_k": )" + deep_array + "}", {"nested deeper than 64 levels"}}});
    }
}

// JSON given to --decode, --chat and template: nesting bounded as for every other JSON file remat
// reads. Each crash is a test case of its own: a signal ends the test case it happens in.
fs::path deep_json() {
    const fs::path p = scratch() / "hostile-text" / "json" / "deep.json";
    if (!fs::exists(p)) write_text(p, deep_array);
    return p;
}
fs::path chat_model() {
    const fs::path model = scratch() / "hostile-text" / "chat-model";
    if (fs::exists(model / "chat_template.jinja")) return model;
    fs::create_directories(model);
    for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"})
        fs::copy_file(generate_model("generate-model") / f, model / f);
    write_text(model / "chat_template.jinja", "{% for m in messages %}<{{ m.role }}>: {{ m.content }}\n{% endfor %}");
    return model;
}

TEST_CASE("--decode of 100000 nested arrays from a file") {  // crashed: exit 139
    refused({"tokenize", small_tokenizer.parent_path().string(), "--decode", "--text", deep_json().string()},
            {deep_json().string(), "nested deeper than"}, {deep_json().parent_path()});
}

TEST_CASE("--decode of 100000 nested arrays from standard input") {  // crashed: exit 139
    refused({"tokenize", small_tokenizer.parent_path().string(), "--decode"}, {"standard input", "nested deeper than"}, {}, 10, deep_array);
}

TEST_CASE("generate --chat with a conversation nested 100000 deep") {  // crashed: exit 139
    const fs::path chat = scratch() / "hostile-text" / "json" / "chat.json";
    write_text(chat, R"([{"role": "user", "content": )" + deep_array + "}]");
    refused({"generate", chat_model().string(), "--chat", chat.string()}, {chat.string(), "nested deeper than"},
            {chat_model(), chat.parent_path()});
}

TEST_CASE("template with messages nested 100000 deep") {  // crashed: exit 139
    refused({"template", chat_model().string(), deep_json().string()}, {deep_json().string(), "nested deeper than"},
            {chat_model(), deep_json().parent_path()});
}

TEST_CASE("--decode: ids that are not ids, named as written") {
    const fs::path dir = place("decode");
    const fs::path tokenizer = small_tokenizer.parent_path();
    SUBCASE("2^63, which no id is") {  // it was shown as -9223372036854775808
        write_text(dir / "2e63.json", "[9223372036854775808]");
        const std::vector<std::string> args{"tokenize", tokenizer.string(), "--decode", "--text", (dir / "2e63.json").string()};
        refused(args, {"9223372036854775808"}, {dir});
        CHECK(run_remat(args).err.find("-9223372036854775808") == std::string::npos);
    }
    SUBCASE("a negative id, a number beyond double's range") {
        write_text(dir / "negative.json", "[-1]");
        refused({"tokenize", tokenizer.string(), "--decode", "--text", (dir / "negative.json").string()}, {"-1"}, {dir});
        write_text(dir / "overflow.json", "[1e400]");
        refused({"tokenize", tokenizer.string(), "--decode", "--text", (dir / "overflow.json").string()},
                {(dir / "overflow.json").string()}, {dir});
    }
}

TEST_CASE("tokenize and encode: NUL bytes, invalid UTF-8 and long lines are text; sizes are bounded") {
    const fs::path tokenizer = small_tokenizer.parent_path();
    const fs::path dir = place("texts-in");
    const fs::path out = place("texts-out");
    SUBCASE("a NUL byte is a character; bytes that are not UTF-8 become U+FFFD; encode writes what tokenize gives") {
        // NUL is the byte-level symbol "Ā": it round-trips through --decode.
        write_text(dir / "nul.txt", std::string("a\0b", 3));
        const std::vector<std::int64_t> nul_ids = tokenize(tokenizer, dir / "nul.txt");
        CHECK(nul_ids.size() == 3);
        write_text(dir / "nul-ids.json", nlohmann::json(nul_ids).dump());
        const Result decoded = accepted({"tokenize", tokenizer.string(), "--decode", "--text", (dir / "nul-ids.json").string()});
        CHECK(decoded.out == std::string("a\0b", 3));
        CHECK(ids_in(accepted({"tokenize", tokenizer.string(), "-"}, 10, std::string("a\0b", 3)).out) == nul_ids);
        // Each maximal ill-formed sequence is one U+FFFD, as Python's errors="replace" (an encoded
        // surrogate is three).
        write_text(dir / "invalid.txt", "caf\xe9 \xff\xfe\xed\xa0\x80");
        write_text(dir / "repaired.txt", "caf\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
        CHECK(tokenize(tokenizer, dir / "invalid.txt") == tokenize(tokenizer, dir / "repaired.txt"));
        for (const char* name : {"nul.txt", "invalid.txt"}) {
            accepted({"encode", tokenizer.string(), (dir / name).string(), "-o", (out / (std::string(name) + ".tok")).string()});
            CHECK(tokens_of(out / (std::string(name) + ".tok")) == tokenize(tokenizer, dir / name, {"--no-special"}));
        }
    }
    SUBCASE("long lines: bounded by the text's size, each a second or so") {
        // tokenize reads a text whole (up to 1 GiB) and holds about 50 bytes per byte of it at its
        // peak, so 2 MiB without a newline take about 100 MB; past some 18 MB the 1 GiB runs out.
        const std::size_t two_mib = std::size_t{2} << 20;
        write_text(dir / "a.txt", std::string(two_mib, 'a'));  // one piece of 2 MiB for BPE
        CHECK(tokenize(tokenizer, dir / "a.txt").size() == two_mib);
        write_text(dir / "spaces.txt", std::string(two_mib, ' '));
        CHECK(tokenize(tokenizer, dir / "spaces.txt").size() == two_mib / 2);  // "ĠĠ" each
        // Mistral's tokenizer has no pre-tokenizer: BPE runs over the whole text at once.
        std::string words;
        while (words.size() < (std::size_t{1} << 20)) words += "the whale and the sea ";
        write_text(dir / "words.txt", words);
        CHECK(tokenize(fixtures / "tokenizer_json" / "mistral", dir / "words.txt").size() > 100000);
        // encode streams; a document with no safe place to cut in 8 MiB is cut anyway, with a warning.
        write_text(dir / "a9.txt", std::string(9 << 20, 'a'));
        const Result cut = accepted({"encode", tokenizer.string(), (dir / "a9.txt").string(), "-o", (out / "a9.tok").string()});
        CHECK(cut.err.starts_with("warning: " + (dir / "a9.txt").string() + ": no place to cut"));
        CHECK(cut.err.find("8388608") != std::string::npos);
        CHECK(cut.out.find("9437184 tokens") != std::string::npos);
    }
    SUBCASE("over tokenize's 1 GiB: refused by size, unread") {
        const fs::path huge = sparse_file("huge.txt", (std::uintmax_t{1} << 30) + 1);
        refused({"tokenize", tokenizer.string(), huge.string()}, {huge.string(), "1073741824"}, {dir, out});
    }
    SUBCASE("within the 1 GiB but beyond the memory: the refusal names the text") {
        if (!memory_can_be_limited) return;
        // 300 MB of NUL bytes need far more than 1 GiB to tokenise; it was "error: out of memory".
        const fs::path huge = sparse_file("huge.txt", 300000000);
        refused({"tokenize", tokenizer.string(), huge.string()}, {huge.string()}, {dir, out});
    }
    SUBCASE("a Replace normalizer that multiplies the text 100000-fold: the refusal names the text") {
        if (!memory_can_be_limited) return;
        const fs::path amplify = tokenizer_with("replace-amplifies", [](Json& t) {
            t["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", std::string(100000, 'x')}};
        });
        write_text(dir / "a5000.txt", std::string(5000, 'a'));
        refused({"tokenize", amplify.string(), (dir / "a5000.txt").string()}, {(dir / "a5000.txt").string()}, {amplify, dir});
    }
}

TEST_CASE("encode: an output that is an input, a special file or unwritable is refused; a failed write leaves the old one") {
    const fs::path tokenizer_dir = place("encode-tokenizer");
    fs::copy_file(small_tokenizer, tokenizer_dir / "tokenizer.json");
    write_text(tokenizer_dir / "tokenizer_config.json", R"({"eos_token": "<|endoftext|>"})");
    const std::string tokenizer = tokenizer_dir.string();
    const fs::path dir = place("encode-outputs");
    write_text(dir / "in.txt", "some text here\n");
    write_text(dir / "two.txt", "doc two\n");
    fs::create_symlink("in.txt", dir / "link.txt");
    fs::create_hard_link(dir / "in.txt", dir / "hard.txt");
    const std::string in = (dir / "in.txt").string();
    const auto overwrite = [&](const fs::path& out) { return std::vector<std::string>{out.string(), "would overwrite"}; };

    SUBCASE("an output that is an input, through a symlink, a hard link, or OUT.valid") {
        refused({"encode", tokenizer, in, "-o", in}, overwrite(dir / "in.txt"), {dir, tokenizer_dir});
        refused({"encode", tokenizer, in, "-o", (dir / "link.txt").string()}, overwrite(dir / "link.txt"), {dir, tokenizer_dir});
        refused({"encode", tokenizer, in, "-o", (dir / "hard.txt").string()}, overwrite(dir / "hard.txt"), {dir, tokenizer_dir});
        refused({"encode", tokenizer, (dir / "link.txt").string(), "-o", in}, overwrite(dir / "in.txt"), {dir, tokenizer_dir});
        refused({"encode", tokenizer, in, "-o", (tokenizer_dir / "tokenizer.json").string()}, overwrite(tokenizer_dir / "tokenizer.json"),
                {dir, tokenizer_dir});
        refused({"encode", tokenizer, in, "-o", (tokenizer_dir / "tokenizer_config.json").string()},
                overwrite(tokenizer_dir / "tokenizer_config.json"), {dir, tokenizer_dir});
        // OUT.valid, a symlink to the second input.
        fs::create_symlink("two.txt", dir / "x.tok.valid");
        refused({"encode", tokenizer, in, (dir / "two.txt").string(), "-o", (dir / "x.tok").string(), "--valid-docs", "1"},
                overwrite(dir / "x.tok.valid"), {dir, tokenizer_dir});
        fs::remove(dir / "x.tok.valid");
    }

    SUBCASE("an output inside a folder given as input, when it exists") {
        // The first run writes it; the second read it as a document and replaced it ("2 documents",
        // the old token file's bytes among them).
        const fs::path docs = place("encode-docs");
        write_text(docs / "a.txt", "a doc\n");
        accepted({"encode", tokenizer, docs.string(), "-o", (docs / "out.tok").string()});
        refused({"encode", tokenizer, docs.string(), "-o", (docs / "out.tok").string()}, overwrite(docs / "out.tok"), {docs});
    }

    SUBCASE("a FIFO, a device, a folder, no folder, an empty path, a read-only folder") {
        REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
        refused({"encode", tokenizer, in, "-o", (dir / "fifo").string()}, {(dir / "fifo").string(), "FIFO"}, {dir});
        refused({"encode", tokenizer, in, "-o", "/dev/null"}, {"/dev/null", "character device"}, {dir});
        fs::create_directory(dir / "folder.tok");
        refused({"encode", tokenizer, in, "-o", (dir / "folder.tok").string()}, {(dir / "folder.tok").string(), "folder"}, {dir});
        const std::string nowhere = (dir / "nowhere" / "x.tok").string();
        refused({"encode", tokenizer, in, "-o", nowhere}, {nowhere, "does not exist"}, {dir});
        refused({"encode", tokenizer, in, "-o", ""}, {"--out", "empty"}, {dir});
        if (::geteuid() != 0) {  // root ignores permissions
            const fs::path locked = place("encode-read-only");
            fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
            const std::string out = (locked / "x.tok").string();
            refused({"encode", tokenizer, in, "-o", out}, {out, "Permission denied"}, {dir, locked});
            fs::permissions(locked, fs::perms::owner_all);
        } else {
            MESSAGE("running as root: the read-only output folder is not tried");
        }
    }

    SUBCASE("a full disk part way: the earlier OUT and OUT.valid byte-identical, no temporary") {
        // A file-size limit in the child, SIGXFSZ ignored: write fails with EFBIG, as on a full disk.
        // First the train part is the large one, then the validation part, written after it.
        std::string long_text;
        while (long_text.size() < 200000) long_text += "the whale and the sea and the ship ";
        write_text(dir / "long.txt", long_text);
        const fs::path out = dir / "prev.tok";
        accepted({"encode", tokenizer, (dir / "two.txt").string(), in, "-o", out.string(), "--valid-docs", "1"});
        for (const bool large_train : {true, false}) {
            CAPTURE(large_train);
            const Snapshot before = snapshot(dir);
            const char* bin = std::getenv("REMAT_BIN");
            REQUIRE(bin != nullptr);
            const std::string large = (dir / "long.txt").string();
            // The second document goes to OUT.valid.
            std::vector<std::string> args{
                bin, "encode", tokenizer, large_train ? large : in, large_train ? in : large, "-o", out.string(), "--valid-docs", "1"};
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            const fs::path err = scratch() / "hostile-text" / "limited-stderr";
            const pid_t pid = ::fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0 || ::dup2(fd, 2) < 0 || ::dup2(fd, 1) < 0) ::_exit(100);
                ::signal(SIGXFSZ, SIG_IGN);
                const rlimit size{16 << 10, 16 << 10};
                if (::setrlimit(RLIMIT_FSIZE, &size) != 0) ::_exit(101);
#ifndef REMAT_ASAN
                const rlimit memory{rlim_t{1} << 30, rlim_t{1} << 30};  // as ChildMemoryLimit
                if (::setrlimit(RLIMIT_AS, &memory) != 0) ::_exit(101);
#endif
                ::execve(bin, argv.data(), environ);
                ::_exit(102);
            }
            int status = 0;
            REQUIRE(::waitpid(pid, &status, 0) == pid);
            REQUIRE(WIFEXITED(status));
            CHECK(WEXITSTATUS(status) == 2);
            const std::string said = read_text(err);  // stdout and stderr both: nothing but the error line
            CAPTURE(said);
            CHECK(said.starts_with("error: "));
            CHECK(std::count(said.begin(), said.end(), '\n') == 1);
            CHECK(said.find(out.string() + (large_train ? "" : ".valid")) != std::string::npos);
            CHECK(said.find("File too large") != std::string::npos);
            CHECK(snapshot(dir) == before);
        }
    }
}
