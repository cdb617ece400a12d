// Unit tests for what fuzzing found (tests/fuzz/corpus/*/crash-* are the reproducers, replayed by the
// fuzz_* tests). Each case crashed the reader before its fix.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include "models/bert/config.hpp"
#include "models/gpt2/config.hpp"
#include "remat/hf/weight_files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {
std::string nested(const std::string& open, const std::string& inner, const std::string& close, int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += open;
    s += inner;
    for (int i = 0; i < depth; ++i) s += close;
    return s;
}
}  // namespace

TEST_CASE("fuzz regression: a number too large for a double is invalid JSON, not an uncaught out_of_range") {
    // crash-number-overflow: nlohmann::json::parse throws out_of_range.406, not parse_error, and only
    // parse_error was caught (std::terminate).
    const std::string text = R"({"vocab_size": 1e400, "n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 8})";
    const std::string message = "config.json: not valid JSON: number overflow parsing '1e400'";
    CHECK_THROWS_WITH_AS(gpt2::Config::from_json(text), message.c_str(), ValueError);
    CHECK_THROWS_WITH_AS(bert::Config::from_json(text), message.c_str(), ValueError);

    // The same in a sharded checkpoint's index.
    const test::TempDir tmp("remat-fuzz-regression");
    const fs::path& dir = tmp.path;
    std::ofstream(dir / "model.safetensors.index.json") << R"({"metadata": {"total_size": 1e400}, "weight_map": {}})";
    CHECK_THROWS_WITH_AS(hf::WeightFiles::open(dir),
                         ((dir / "model.safetensors.index.json").string() +
                          ": not valid JSON: number overflow parsing '1e400'")
                             .c_str(),
                         hf::FormatError);
}

TEST_CASE("fuzz regression: a deeply nested config value is refused while parsing, never built or dumped") {
    // crash-deep-nesting: the message dumped the offending value with nlohmann's recursive dump(),
    // which overflowed the stack on 30000 nested arrays. Now strict_json refuses nesting beyond 64
    // levels while parsing, so no value deep enough to recurse on is ever built.
    const std::string deep = nested("[", "", "]", 30000);
    const char* refused = "config.json: nested deeper than 64 levels";
    CHECK_THROWS_WITH_AS(gpt2::Config::from_json(R"({"vocab_size": )" + deep + "}"), refused, ValueError);
    CHECK_THROWS_WITH_AS(
        gpt2::Config::from_json(R"({"vocab_size": 8, "n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 8, "resid_pdrop": )" +
                                nested(R"({"a":)", "1", "}", 30000) + "}"),
        refused, ValueError);
    // 64 levels are still a value, named by its kind.
    CHECK_THROWS_WITH_AS(
        gpt2::Config::from_json(R"({"vocab_size": )" + nested("[", "", "]", 63) + R"(, "n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 8})"),
        "config.json: vocab_size must be a non-negative integer, got an array", ValueError);
    CHECK_THROWS_WITH_AS(bert::Config::from_json(R"({"vocab_size": 8, "hidden_size": 8, "num_hidden_layers": 1, )"
                                                 R"("num_attention_heads": 2, "intermediate_size": 4, "position_embedding_type": )" +
                                                 nested("[", "", "]", 63) + "}"),
                         "config.json: unsupported position_embedding_type an array (only \"absolute\")", ValueError);
    // Long strings are cut short in messages.
    CHECK_THROWS_WITH_AS(gpt2::Config::from_json(R"({"vocab_size": ")" + std::string(1000, 'x') +
                                                 R"(", "n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 8})"),
                         ("config.json: vocab_size must be a non-negative integer, got \"" + std::string(76, 'x') + "...").c_str(),
                         ValueError);
}

TEST_CASE("fuzz regression: a shard name longer than the file system allows is a missing shard") {
    // crash-long-shard-name: std::filesystem::exists threw filesystem_error (ENAMETOOLONG) out of
    // WeightFiles::open, past the reader's FormatError contract.
    const test::TempDir tmp("remat-fuzz-regression");
    const fs::path& dir = tmp.path;
    const std::string shard = std::string(300, 'x') + ".safetensors";
    std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"a": ")" + shard + R"("}})";
    CHECK_THROWS_WITH_AS(hf::WeightFiles::open(dir),
                         ((dir / "model.safetensors.index.json").string() + ": shard " + shard + " is missing").c_str(),
                         hf::FormatError);
    // A folder name that long is no model folder either, and the message says why.
    const fs::path long_dir = dir / std::string(300, 'y');
    CHECK_THROWS_WITH_AS(hf::WeightFiles::open(long_dir), (long_dir.string() + ": a name too long for the file system (File name too long)").c_str(),
                         hf::FormatError);
}

TEST_CASE("a multi-gigabyte config.json is refused before anything is allocated") {
    const test::TempDir tmp("remat-fuzz-regression");
    const fs::path config = tmp / "config.json";
    std::ofstream(config) << "{";
    fs::resize_file(config, std::uintmax_t{3} << 30);  // sparse: costs no disk
    CHECK_THROWS_WITH_AS(gpt2::Config::from_file(config),
                         (config.string() + ": is 3221225472 bytes, over the 16777216-byte limit for a config file").c_str(),
                         FormatError);
}
