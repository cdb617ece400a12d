// GPT-2 byte-level BPE against ids computed by tests/fixtures/make_tokenizer_fixtures.py (encoder.py's
// algorithm, as HF's GPT2Tokenizer runs it), raw bytes, the model-folder rules, and every malformed file
// with its message.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/hf/error.hpp"
#include "remat/text/tokenizer.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
using namespace remat::text;
using test::TempDir;
namespace fs = std::filesystem;
using json = nlohmann::json;
using Ids = std::vector<std::int64_t>;

using remat::test::read_text;

namespace {

using test::tokenizer_fixtures;

std::string from_hex(const std::string& hex) {
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return bytes;
}

struct Case {
    std::string name, tokenizer, text, decoded;  // decoded: what decode gives back (the text with U+FFFD)
    Ids ids;
};

std::vector<Case> reference_cases() {
    std::vector<Case> cases;
    const json encodings = json::parse(read_text(tokenizer_fixtures / "encodings.json"));
    for (const json& c : encodings["cases"]) {
        Case k{c["name"], c.value("tokenizer", ""), c.contains("hex") ? from_hex(c["hex"]) : c["text"].get<std::string>(), {}, c["ids"]};
        k.decoded = c.value("decoded", k.text);
        cases.push_back(std::move(k));
    }
    return cases;
}

// The 256 byte-symbol tokens of the fixture vocabulary (ids 0..255, GPT-2's layout), to build small
// tokenizers on.
json byte_vocab() {
    json all = json::parse(read_text(tokenizer_fixtures / "vocab.json")), bytes = json::object();
    for (const auto& [token, id] : all.items())
        if (id.get<int>() < 256) bytes[token] = id;
    return bytes;
}

Gpt2Tokenizer small_tokenizer(const TempDir& tmp, json vocab, const std::string& merges) {
    return Gpt2Tokenizer::from_files(tmp.write("vocab.json", vocab.dump()), tmp.write("merges.txt", merges));
}

Gpt2Tokenizer fixture_tokenizer() { return Gpt2Tokenizer::from_files(tokenizer_fixtures / "vocab.json", tokenizer_fixtures / "merges.txt"); }

}  // namespace

TEST_CASE("Gpt2Tokenizer encodes as HF's GPT2Tokenizer") {
    const auto cases = reference_cases();
    REQUIRE(cases.size() >= 20);
    const auto main = fixture_tokenizer();
    const auto out_of_order = Gpt2Tokenizer::from_files(tokenizer_fixtures / "out-of-order" / "vocab.json", tokenizer_fixtures / "out-of-order" / "merges.txt");

    SUBCASE("vocab.json + merges.txt") {
        for (const Case& c : cases) {
            INFO("case: " << c.name);
            CHECK(((c.tokenizer.empty() ? main : out_of_order).encode(c.text)) == c.ids);
        }
    }
    SUBCASE("tokenizer.json, merges as \"a b\", gives the same ids") {
        const auto from_json = Gpt2Tokenizer::from_tokenizer_json(tokenizer_fixtures / "tokenizer.json");
        CHECK(from_json.vocab_size() == main.vocab_size());
        for (const Case& c : cases) {
            INFO("case: " << c.name);
            if (c.tokenizer.empty()) CHECK(from_json.encode(c.text) == c.ids);
        }
    }
    SUBCASE("tokenizer.json, merges as [\"a\", \"b\"], gives the same ids") {
        const auto from_json = Gpt2Tokenizer::from_tokenizer_json(tokenizer_fixtures / "out-of-order" / "tokenizer.json");
        for (const Case& c : cases) {
            INFO("case: " << c.name);
            if (!c.tokenizer.empty()) CHECK(from_json.encode(c.text) == c.ids);
        }
    }
    SUBCASE("vocab_size and describe") {
        CHECK(main.vocab_size() == 577);
        CHECK(main.describe() == "GPT-2 byte-level BPE (vocab.json + merges.txt, 577 tokens)");
        CHECK(Gpt2Tokenizer::from_tokenizer_json(tokenizer_fixtures / "tokenizer.json").describe() ==
              "GPT-2 byte-level BPE (tokenizer.json, 577 tokens)");
    }
}

TEST_CASE("Gpt2Tokenizer decodes") {
    const auto tokenizer = fixture_tokenizer();

    SUBCASE("decode(encode(text)) gives the text back; invalid UTF-8 comes back as U+FFFD") {
        for (const Case& c : reference_cases()) {
            INFO("case: " << c.name);
            if (c.tokenizer.empty()) CHECK(tokenizer.decode(tokenizer.encode(c.text)) == c.decoded);
        }
    }
    SUBCASE("the byte alphabet of OpenAI's bytes_to_unicode") {
        // Printable bytes stand for themselves, the other 68 for U+0100 onwards in byte order.
        const json vocab = json::parse(read_text(tokenizer_fixtures / "vocab.json"));
        auto bytes_of = [&](const char* symbol) { return tokenizer.decode(Ids{vocab[symbol].get<std::int64_t>()}); };
        CHECK(bytes_of("!") == "!");
        CHECK(bytes_of("~") == "~");
        CHECK(bytes_of("\u00A1") == "\xA1");  // '¡'
        CHECK(bytes_of("\u00AE") == "\xAE");  // '®'
        CHECK(bytes_of("\u00FF") == "\xFF");  // 'ÿ'
        CHECK(bytes_of("\u0100") == std::string(1, '\0'));
        CHECK(bytes_of("\u0109") == "\t");
        CHECK(bytes_of("\u010A") == "\n");
        CHECK(bytes_of("\u0120") == " ");     // 'Ġ'
        CHECK(bytes_of("\u0121") == "\x7F");  // after the 33 control bytes and space
        CHECK(bytes_of("\u0122") == "\x80");
        CHECK(bytes_of("\u0142") == "\xA0");
        CHECK(bytes_of("\u0143") == "\xAD");  // the last one
        std::string all;
        Ids ids;
        for (int b = 0; b < 256; ++b) {
            all += static_cast<char>(b);
            ids.push_back(b);
        }
        std::string decoded = tokenizer.decode(ids);
        std::sort(decoded.begin(), decoded.end());
        std::sort(all.begin(), all.end());
        CHECK(decoded == all);  // ids 0..255 are the 256 bytes, each once
    }
    SUBCASE("ids no token has are a ValueError") {
        CHECK_THROWS_WITH_AS(tokenizer.decode(Ids{1, 577}), "decode: token id 577 is outside the vocabulary [0, 577)", ValueError);
        CHECK_THROWS_WITH_AS(tokenizer.decode(Ids{-1}), "decode: token id -1 is outside the vocabulary [0, 577)", ValueError);
        TempDir tmp;
        json vocab = byte_vocab();
        vocab["<|endoftext|>"] = 300;  // ids 256..299 have no token
        const auto holes = small_tokenizer(tmp, vocab, "#version: 0.2\n");
        CHECK(holes.vocab_size() == 301);
        CHECK_THROWS_WITH_AS(holes.decode(Ids{256}), "decode: no token has id 256", ValueError);
    }
}

TEST_CASE("Gpt2Tokenizer on text the tokenizer_fixtures do not cover") {
    const auto tokenizer = fixture_tokenizer();
    const json vocab = json::parse(read_text(tokenizer_fixtures / "vocab.json"));
    auto id = [&](const char* token) { return vocab[token].get<std::int64_t>(); };

    SUBCASE("an invalid byte encodes as U+FFFD would") {
        CHECK(tokenizer.encode("\xFF") == tokenizer.encode("\xEF\xBF\xBD"));
        CHECK(tokenizer.encode("a\xE2\x82z") == tokenizer.encode("a\xEF\xBF\xBDz"));  // one U+FFFD for a truncated sequence
        CHECK(tokenizer.encode("\xED\xA0\x80") == tokenizer.encode("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));  // a surrogate: three
    }
    SUBCASE("\\s is Unicode White_Space, as in Python's regex") {
        // Merges that show where a piece starts: a space joins the next piece only when that is not
        // whitespace.
        TempDir tmp;
        json small = byte_vocab();
        small["\u0120\u00E1"] = 256;  // "Ġá": space + first byte of U+1xxx
        small["\u0120\u00C2"] = 257;  // "ĠÂ": space + first byte of U+0080..U+00BF
        const auto t = small_tokenizer(tmp, small, "\u0120 \u00E1\n\u0120 \u00C2\n");
        auto byte = [&](const char* symbol) { return small[symbol].get<std::int64_t>(); };
        // U+180E (E1 A0 8E), the Mongolian vowel separator, is no longer White_Space; PCRE2's own \s matches it.
        CHECK(t.encode(" \u180Ex") == Ids{256, byte("\u0142"), byte("\u0130"), byte("x")});
        // U+00A0 (C2 A0) and U+0085 (C2 85) are; without Unicode classes they would be punctuation.
        CHECK(t.encode("x \u00A0y") == Ids{byte("x"), byte("\u0120"), byte("\u00C2"), byte("\u0142"), byte("y")});
        CHECK(t.encode("x \u0085y") == Ids{byte("x"), byte("\u0120"), byte("\u00C2"), byte("\u0127"), byte("y")});
        CHECK(t.encode("x \u00ACy") == Ids{byte("x"), 257, byte("\u00AC"), byte("y")});  // '¬' is punctuation
    }
    SUBCASE("long pieces: one heap pass per rank, not one scan per merge") {
        const auto aa = Gpt2Tokenizer::from_files(tokenizer_fixtures / "out-of-order" / "vocab.json", tokenizer_fixtures / "out-of-order" / "merges.txt");
        const json small = json::parse(read_text(tokenizer_fixtures / "out-of-order" / "vocab.json"));
        const Ids ids = aa.encode(std::string(1 << 20, 'a'));  // "a a" then "aa aa": 2^18 times "aaaa"
        CHECK(ids == Ids(1 << 18, small["aaaa"].get<std::int64_t>()));
        const std::string spaces = std::string(1 << 20, ' ') + "x";
        CHECK(tokenizer.decode(tokenizer.encode(spaces)) == spaces);
    }
    SUBCASE("added tokens are matched before the regex, leftmost then longest") {
        TempDir tmp;
        json j = json::parse(read_text(tokenizer_fixtures / "tokenizer.json"));
        j["added_tokens"].push_back({{"id", 577}, {"content", "<|end"}, {"special", true}});
        j["added_tokens"].push_back({{"id", 580}, {"content", "ü!"}, {"special", false}});
        const auto added = Gpt2Tokenizer::from_tokenizer_json(tmp.write("tokenizer.json", j.dump()));
        CHECK(added.vocab_size() == 581);
        const std::int64_t eot = id("<|endoftext|>");
        auto joined = [](std::initializer_list<Ids> parts) {
            Ids all;
            for (const Ids& p : parts) all.insert(all.end(), p.begin(), p.end());
            return all;
        };
        CHECK(added.encode("<|endoftext|>") == Ids{eot});
        CHECK(added.encode("<|end of") == joined({{577}, tokenizer.encode(" of")}));
        CHECK(added.encode("x<|<|endoftext|>ü!!") == joined({tokenizer.encode("x<|"), {eot, 580}, tokenizer.encode("!")}));
        CHECK(added.decode(Ids{580, 577}) == "ü!<|end");
    }
    SUBCASE("encode is safe to call from several threads") {
        const std::string text = read_text(tokenizer_fixtures / "merges.txt");
        const Ids expected = tokenizer.encode(text);
        std::vector<Ids> got(4);
        std::vector<std::thread> threads;
        for (auto& g : got) threads.emplace_back([&] { g = tokenizer.encode(text); });
        for (auto& t : threads) t.join();
        for (const auto& g : got) CHECK(g == expected);
    }
}

TEST_CASE("Gpt2Tokenizer reads merges.txt as HF does") {
    TempDir tmp;
    json vocab = byte_vocab();
    vocab["ab"] = 256;
    vocab["bc"] = 257;
    vocab["abc"] = 258;
    const Ids a_b_c{64, 65, 66};  // 'a' is id 64 in GPT-2's layout

    SUBCASE("\"#version\" lines, CRLF line ends and blank trailing lines") {
        const auto t = small_tokenizer(tmp, vocab, "#version: 0.2\r\na b\r\nab c\r\n\r\n\n");
        CHECK(t.encode("abc") == Ids{258});
    }
    SUBCASE("no merges: every byte is its own token") { CHECK(small_tokenizer(tmp, vocab, "").encode("abc") == a_b_c); }
    SUBCASE("a merge listed twice takes the later rank, as Python's dict and tokenizers' map keep the last") {
        // (b, c) ranks 2, after (a, b): "abc" -> "ab c", which has no merge. With rank 0 it would be "a bc".
        CHECK(small_tokenizer(tmp, vocab, "b c\na b\nb c\n").encode("abc") == Ids{256, 66});
        CHECK(small_tokenizer(tmp, vocab, "b c\na b\n").encode("abc") == Ids{64, 257});
    }
}

TEST_CASE("Malformed tokenizer files") {
    TempDir tmp;
    json vocab = byte_vocab();
    vocab["ab"] = 256;
    const fs::path merges = tmp.write("merges.txt", "#version: 0.2\na b\n");
    auto with_vocab = [&](const std::string& text) { return Gpt2Tokenizer::from_files(tmp.write("vocab.json", text), merges); };
    auto with_merges = [&](const std::string& text) {
        return Gpt2Tokenizer::from_files(tmp.write("vocab.json", vocab.dump()), tmp.write("merges.txt", text));
    };
    const std::string v = (tmp / "vocab.json").string(), m = (tmp / "merges.txt").string();

    SUBCASE("vocab.json") {
        CHECK_THROWS_WITH_AS(Gpt2Tokenizer::from_files(tmp / "none.json", merges), ((tmp / "none.json").string() + ": cannot read: No such file or directory").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"a\": 1,}"), doctest::Contains((v + ": not valid JSON: parse error at line 1, column 9: syntax error").c_str()),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("[1, 2]"), (v + ": expected a JSON object of token -> id, got [1,2]").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"abc\": 1.5}"), (v + ": token id 1.5 of \"abc\" is not an integer in [0, 2^31)").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"abc\": -1}"), (v + ": token id -1 of \"abc\" is not an integer in [0, 2^31)").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"abc\": 2147483648}"),
                             (v + ": token id 2147483648 of \"abc\" is not an integer in [0, 2^31)").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"abc\": \"7\"}"), (v + ": token id \"7\" of \"abc\" is not an integer in [0, 2^31)").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"a\": 1, \"b\": 2, \"a\": 3}"), (v + ": duplicate key \"a\"").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"a\": 7, \"b\": 7}"), (v + ": tokens \"a\" and \"b\" both have id 7").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_vocab("{\"a\": 0, \"b\": 1, \"ab\": 2}"),
                             (v + ": 254 of the 256 byte symbols have no token, the first is \"Ā\" (byte 0x00); "
                                  "a byte-level BPE vocabulary needs them all")
                                 .c_str(),
                             hf::FormatError);
    }
    SUBCASE("merges.txt") {
        CHECK_THROWS_WITH_AS(with_merges("#version: 0.2\na b c\n"), (m + ":2: \"a b c\" is not two symbols separated by one space").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_merges("ab\n"), (m + ":1: \"ab\" is not two symbols separated by one space").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_merges("a  b\n"), (m + ":1: \"a  b\" is not two symbols separated by one space").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_merges("a b\n\nb c\n"), (m + ":2: \"\" is not two symbols separated by one space").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with_merges("a b\nx\xFF y\n"), (m + ":2: not valid UTF-8").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_merges("a b\nab ZZ\n"), (m + ":2: \"ab ZZ\": \"ZZ\" is not in vocab.json").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with_merges("b c\n"), (m + ":1: \"b c\": the merged token \"bc\" is not in vocab.json").c_str(),
                             hf::FormatError);
    }
    SUBCASE("tokenizer.json") {
        const json good = json::parse(read_text(tokenizer_fixtures / "tokenizer.json"));
        const std::string t = (tmp / "tokenizer.json").string();
        auto with = [&](const std::function<void(json&)>& change) {
            json j = good;
            change(j);
            return Gpt2Tokenizer::from_tokenizer_json(tmp.write("tokenizer.json", j.dump()));
        };
        CHECK_THROWS_WITH_AS(with([](json& j) { j["model"]["type"] = "WordPiece"; }),
                             (t + ": model.type is \"WordPiece\"; only \"BPE\" (GPT-2's byte-level BPE) is supported").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j.erase("model"); }), (t + ": no \"model\" object").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["pre_tokenizer"]["add_prefix_space"] = true; }),
                             doctest::Contains((t + ": pre_tokenizer is {\"add_prefix_space\":true,").c_str()), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["normalizer"] = {{"type", "NFC"}}; }),
                             (t + ": normalizer {\"type\":\"NFC\"} is not supported (GPT-2 has none)").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["model"]["byte_fallback"] = true; }),
                             (t + ": model: byte_fallback is true; only false (GPT-2's) is supported").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["model"]["merges"][3] = json::array({1, 2}); }),
                             (t + ": model.merges[3]: [1,2] is not two symbols, as \"a b\" or [\"a\", \"b\"]").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["model"]["merges"][0] = "Ġ zz"; }),
                             (t + ": model.merges[0]: \"Ġ zz\": \"zz\" is not in model.vocab").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["model"]["vocab"]["x"] = 1.0; }),
                             (t + ": model.vocab: token id 1.0 of \"x\" is not an integer in [0, 2^31)").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["added_tokens"][0]["lstrip"] = true; }),
                             (t + ": added_tokens[0]: \"<|endoftext|>\" has lstrip true, which is not supported "
                                  "(GPT-2's added tokens match literally)")
                                 .c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(with([](json& j) { j["added_tokens"][0]["id"] = 5; }),
                             (t + ": added_tokens[0]: \"<|endoftext|>\" has id 5 but model.vocab gives it 576").c_str(), hf::FormatError);
        const std::string duplicate = read_text(tokenizer_fixtures / "tokenizer.json").replace(1, 0, "\"model\": {},");
        CHECK_THROWS_WITH_AS(Gpt2Tokenizer::from_tokenizer_json(tmp.write("tokenizer.json", duplicate)),
                             (t + ": duplicate key \"model\"").c_str(), hf::FormatError);
        const std::string nested = read_text(tokenizer_fixtures / "tokenizer.json").replace(read_text(tokenizer_fixtures / "tokenizer.json").find("\"vocab\":{") + 9, 0, "\"ab\":1,");
        CHECK_THROWS_WITH_AS(Gpt2Tokenizer::from_tokenizer_json(tmp.write("tokenizer.json", nested)),
                             (t + ": duplicate key \"ab\" in model.vocab").c_str(), hf::FormatError);
    }
}

TEST_CASE("ByteTokenizer") {
    const ByteTokenizer bytes;
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    SUBCASE("ids are byte values, any bytes round-trip") {
        const Ids ids = bytes.encode(all);
        REQUIRE(ids.size() == 256);
        for (int b = 0; b < 256; ++b) CHECK(ids[b] == b);
        CHECK(bytes.decode(ids) == all);
        CHECK(bytes.encode("é") == Ids{0xC3, 0xA9});
        CHECK(bytes.vocab_size() == 256);
        CHECK(bytes.describe() == "raw bytes (256 ids)");
    }
    SUBCASE("ids outside 0..255 are a ValueError") {
        CHECK_THROWS_WITH_AS(bytes.decode(Ids{256}), "decode: token id 256 is not a byte (raw-byte ids are 0 to 255)", ValueError);
        CHECK_THROWS_WITH_AS(bytes.decode(Ids{-1}), "decode: token id -1 is not a byte (raw-byte ids are 0 to 255)", ValueError);
    }
}

TEST_CASE("tokenizer_for_folder") {
    TempDir tmp;
    SUBCASE("tokenizer.json first, as HF's AutoTokenizer prefers the fast tokenizer") {
        auto [tokenizer, warnings] = tokenizer_for_folder(tokenizer_fixtures, 50257);
        CHECK(tokenizer->describe() == "tokenizer.json BPE (tokenizer.json, 577 tokens)");
        CHECK(tokenizer->encode("It's") == fixture_tokenizer().encode("It's"));
        CHECK(warnings.empty());
    }
    SUBCASE("then vocab.json + merges.txt") {
        fs::copy_file(tokenizer_fixtures / "vocab.json", tmp / "vocab.json");
        fs::copy_file(tokenizer_fixtures / "merges.txt", tmp / "merges.txt");
        auto [tokenizer, warnings] = tokenizer_for_folder(tmp.path, 577);
        CHECK(tokenizer->describe() == "GPT-2 byte-level BPE (vocab.json + merges.txt, 577 tokens)");
        CHECK(warnings.empty());
    }
    SUBCASE("else raw bytes, with a warning") {
        auto [tokenizer, warnings] = tokenizer_for_folder(tmp.path, 256);
        CHECK(tokenizer->describe() == "raw bytes (256 ids)");
        CHECK(warnings == std::vector<std::string>{tmp.path.string() + " has no vocab.json + merges.txt or tokenizer.json: using raw bytes as token ids"});
    }
    SUBCASE("the model's embedding must take every id") {
        CHECK_THROWS_WITH_AS(tokenizer_for_folder(tmp.path, 255),
                             (tmp.path.string() + " has no vocab.json + merges.txt or tokenizer.json, and raw bytes as token ids need a "
                                                 "vocab_size of 256, but the model's is 255")
                                 .c_str(),
                             ValueError);
        CHECK_THROWS_WITH_AS(tokenizer_for_folder(tokenizer_fixtures, 576),
                             ((tokenizer_fixtures / "tokenizer.json").string() + ": the tokenizer's largest id is 576, but the model's vocab_size is 576").c_str(),
                             ValueError);
        CHECK(tokenizer_for_folder(tokenizer_fixtures, 577).tokenizer->vocab_size() == 577);
    }
    SUBCASE("half a tokenizer, or no folder, is an error") {
        fs::copy_file(tokenizer_fixtures / "vocab.json", tmp / "vocab.json");
        CHECK_THROWS_WITH_AS(tokenizer_for_folder(tmp.path, 50257), (tmp.path.string() + ": has vocab.json but no merges.txt, and no tokenizer.json").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(tokenizer_for_folder(tmp / "missing", 50257), ((tmp / "missing").string() + ": not a folder").c_str(), ValueError);
    }
    SUBCASE("a malformed file is reported, not skipped") {
        fs::copy_file(tokenizer_fixtures / "vocab.json", tmp / "vocab.json");
        tmp.write("merges.txt", "a b c\n");
        CHECK_THROWS_AS(tokenizer_for_folder(tmp.path, 50257), hf::FormatError);
    }
}
