// BERT's WordPiece against ids computed by tests/fixtures/make_wordpiece_fixtures.py (an independent
// reading of HF's BertTokenizer), the safe-cut property on random cuts, and malformed files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/text/wordpiece.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
using namespace remat::text;
namespace fs = std::filesystem;
using json = nlohmann::json;
using Ids = std::vector<std::int64_t>;

namespace {

const fs::path wordpiece_fixtures = fs::path(REMAT_FIXTURES) / "wordpiece";

json read_json(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return json::parse(s.str());
}

fs::path write(const fs::path& file, const std::string& text) {
    std::ofstream(file, std::ios::binary) << text;
    return file;
}

WordPieceOptions options_of(const json& o) {
    WordPieceOptions options;
    options.do_lower_case = o.value("do_lower_case", true);
    if (o.contains("strip_accents")) options.strip_accents = o["strip_accents"].get<bool>();
    options.tokenize_chinese_chars = o.value("tokenize_chinese_chars", true);
    return options;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("wordpiece: ids equal the reference's, for every case and configuration") {
    const json cases = read_json(wordpiece_fixtures / "encodings.json")["cases"];
    REQUIRE(cases.size() >= 100);
    for (const json& c : cases) {
        CAPTURE(c["name"].get<std::string>());
        const auto tokenizer = WordPieceTokenizer::from_vocab(wordpiece_fixtures / c["vocab"].get<std::string>() / "vocab.txt",
                                                              options_of(c["options"]));
        const std::string text = c["text"].get<std::string>();
        const Ids ids = tokenizer.encode(text);
        CHECK(ids == c["ids"].get<Ids>());
        CHECK(tokenizer.decode(ids) == c["decoded"].get<std::string>());
    }
}

TEST_CASE("wordpiece: the folder's tokenizer_config.json chooses cased or uncased") {
    const std::string text = "Café ΟΔΟΣ [CLS] x";
    const json cases = read_json(wordpiece_fixtures / "encodings.json")["cases"];
    for (const char* name : {"uncased", "cased"}) {
        FolderTokenizer f = wordpiece_for_folder(wordpiece_fixtures / name, 1000);
        CHECK(f.warnings.empty());
        const auto options = WordPieceTokenizer::read_options(wordpiece_fixtures / name / "tokenizer_config.json");
        CHECK(options.do_lower_case == (std::string(name) == "uncased"));
        const auto direct = WordPieceTokenizer::from_vocab(wordpiece_fixtures / name / "vocab.txt", options);
        CHECK(f.tokenizer->encode(text) == direct.encode(text));
        CHECK(f.tokenizer->describe() == "BERT WordPiece (vocab.txt, " + std::to_string(direct.vocab_size()) + " tokens, " + name + ")");
    }
    // Defaults as BertTokenizer's: uncased, accents stripped.
    const auto uncased = WordPieceTokenizer::from_vocab(wordpiece_fixtures / "uncased" / "vocab.txt");
    CHECK(uncased.decode(uncased.encode("Café")) == "cafe");
}

TEST_CASE("wordpiece: special tokens, separator and decode") {
    const auto t = WordPieceTokenizer::from_vocab(wordpiece_fixtures / "uncased" / "vocab.txt");
    // vocab.txt starts [PAD] [unused0] [unused1] [UNK] [CLS] [SEP] [MASK]
    CHECK(t.id_of("[PAD]") == 0);
    CHECK(t.id_of("[SEP]") == 5);
    CHECK(t.id_of("no such token") == std::nullopt);
    CHECK(t.document_separator() == 5);
    CHECK(t.special_ids() == Ids{3, 5, 0, 4, 6});
    CHECK(t.encode("[CLS]") == Ids{4});
    // decode joins with spaces and glues "##" pieces to the piece before.
    const Ids ids = t.encode("Unaffable, [MASK]!");
    CHECK(t.decode(ids) == "unaffable , [MASK] !");
    CHECK(t.decode(Ids{}) == "");
    CHECK(contains(error_of([&] { (void)t.decode(Ids{t.vocab_size()}); }), "outside the vocabulary"));
    CHECK(contains(error_of([&] { (void)t.decode(Ids{-1}); }), "token id -1"));
}

TEST_CASE("wordpiece: bytes that are not UTF-8 vanish, as U+FFFD does") {
    const auto t = WordPieceTokenizer::from_vocab(wordpiece_fixtures / "uncased" / "vocab.txt");
    CHECK(t.encode("te\xff" "xt \xe2\x82 model") == t.encode("text  model"));
}

TEST_CASE("wordpiece: the text may be cut at last_safe_cut, whatever follows") {
    const auto uncased = WordPieceTokenizer::from_vocab(wordpiece_fixtures / "uncased" / "vocab.txt");
    const auto cased = WordPieceTokenizer::from_vocab(wordpiece_fixtures / "cased" / "vocab.txt", {.do_lower_case = false});
    // Fragments that stress each rule at a boundary: marks that combine (NFC) or are stripped, CJK,
    // controls, special tokens, punctuation, every kind of white space, invalid bytes.
    const std::vector<std::string> pieces = {
        "the", "model", "unaffable", "Café", "e", "\u0301", "\u0308", "ΟΔΟΣ", "Σ", "東京", "北", "ＡＢＣ",
        "[CLS]", "[SEP]", "[MA", "SK]", "[", "]", ",", ".", "!", "—", "\x00", "\x01", "\u200b", "\ufffd",
        "\xe2\x82", "\xff", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085", "x", "ab",
        "😀", "İ", "ᄒ", "\u1161", "\u11ab"};
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    int cuts = 0;
    for (int round = 0; round < 400; ++round) {
        std::string text;
        const std::size_t n = 1 + rng() % 40;
        for (std::size_t i = 0; i < n; ++i) text += pieces[pick(rng)];
        const std::size_t seen = rng() % (text.size() + 1);  // a streaming encoder has read this much
        for (const WordPieceTokenizer* t : {&uncased, &cased}) {
            const std::size_t p = t->last_safe_cut(std::string_view(text).substr(0, seen));
            CAPTURE(text);
            CAPTURE(seen);
            CAPTURE(p);
            if (p == 0) continue;
            REQUIRE(p < seen);
            Ids joined = t->encode(text.substr(0, p));
            const Ids rest = t->encode(text.substr(p));
            joined.insert(joined.end(), rest.begin(), rest.end());
            CHECK(joined == t->encode(text));
            ++cuts;
        }
    }
    CHECK(cuts > 300);
    CHECK(uncased.last_safe_cut("") == 0);
    CHECK(uncased.last_safe_cut("word") == 0);
    CHECK(uncased.last_safe_cut(" word") == 0);  // a cut at 0 is no progress
    CHECK(uncased.last_safe_cut("a b\tc") == 3);
}

TEST_CASE("wordpiece: a bad vocab.txt or tokenizer_config.json is an error naming the file") {
    remat::test::TempDir dir("remat-wordpiece");
    auto vocab_error = [&](const std::string& text) {
        const fs::path file = write(dir.path / "vocab.txt", text);
        return error_of([&] { (void)WordPieceTokenizer::from_vocab(file); });
    };
    const std::string file = (dir.path / "vocab.txt").string();
    CHECK(vocab_error("") == file + ": no tokens (expected one WordPiece token a line)");
    CHECK(vocab_error("\n\n") == file + ": no tokens (expected one WordPiece token a line)");
    CHECK(vocab_error("[UNK]\na\nb\na\n") == file + ":4: token \"a\" is also on line 2");
    CHECK(vocab_error("[PAD]\na\n") == file + ": has no \"[UNK]\" token, which WordPiece gives to words it cannot cover");
    CHECK(vocab_error("[UNK]\n\na\n") == file + ":2: empty line (each line is one token)");
    CHECK(vocab_error("[UNK]\na\xff\n") == file + ":2: not valid UTF-8");
    CHECK(contains(error_of([&] { (void)WordPieceTokenizer::from_vocab(dir.path / "absent.txt"); }), "absent.txt: cannot read"));
    // CRLF and a missing final newline are fine; blank lines at the end are not tokens.
    write(dir.path / "vocab.txt", "[UNK]\r\nhello\r\n##s\rworld\n\n\n");
    const auto t = WordPieceTokenizer::from_vocab(dir.path / "vocab.txt");
    CHECK(t.vocab_size() == 4);
    CHECK(t.encode("Hellos world there") == Ids{1, 2, 3, 0});

    auto config_error = [&](const std::string& text) {
        const fs::path config = write(dir.path / "tokenizer_config.json", text);
        return error_of([&] { (void)WordPieceTokenizer::read_options(config); });
    };
    const std::string config = (dir.path / "tokenizer_config.json").string();
    CHECK(contains(config_error("{"), config + ": not valid JSON"));
    CHECK(config_error("{\"do_lower_case\": 1}") == config + ": do_lower_case is 1, expected true or false");
    CHECK(config_error("{\"do_basic_tokenize\": false}") ==
          config + ": do_basic_tokenize is false, which is not supported (remat runs BERT's basic tokenizer always)");
    CHECK(config_error("{\"unk_token\": \"<unk>\"}") == config + ": unk_token is \"<unk>\"; only BERT's \"[UNK]\" is supported");
    CHECK(config_error("{\"mask_token\": {\"content\": \"[MASK]\", \"lstrip\": false}, \"strip_accents\": null}") == "(no error)");
    CHECK(contains(config_error("{\"a\": 1, \"a\": 2}"), "duplicate key \"a\""));
}

TEST_CASE("wordpiece: never_split words are kept whole") {
    remat::test::TempDir dir("remat-wordpiece");
    write(dir.path / "vocab.txt", "[UNK]\nfoo\n##-\n##bar\n-\nbar\n");
    const auto options = WordPieceTokenizer::read_options(write(dir.path / "tokenizer_config.json", R"({"never_split": ["foo-bar"]})"));
    const auto t = WordPieceTokenizer::from_vocab(dir.path / "vocab.txt", options);
    CHECK(t.encode("foo-bar foo-bars") == Ids{1, 2, 3, 1, 4, 0});  // foo ##- ##bar | foo - [UNK] (bars: bar, no ##s)
}

TEST_CASE("wordpiece: a BERT folder needs vocab.txt") {
    remat::test::TempDir dir("remat-wordpiece");
    const std::string e = error_of([&] { (void)wordpiece_for_folder(dir.path, 100); });
    CHECK(e.find((dir.path / "vocab.txt").string() + ": missing") == 0);
    CHECK(contains(error_of([&] { (void)wordpiece_for_folder(dir.path / "nothing", 100); }), "not a folder"));
    CHECK(error_of([&] { (void)wordpiece_for_folder(wordpiece_fixtures / "uncased", 100); }) ==
          (wordpiece_fixtures / "uncased" / "vocab.txt").string() + ": the tokenizer's largest id is 524, but the model's vocab_size is 100");
}
