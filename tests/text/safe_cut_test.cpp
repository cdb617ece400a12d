// Tokenizer::last_safe_cut: cutting a text there and encoding the halves gives the ids of the whole,
// whatever follows the cut text — checked on random cuts of real and adversarial text.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "remat/text/tokenizer.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
using namespace remat::text;
namespace fs = std::filesystem;
using Ids = std::vector<std::int64_t>;

namespace {

using test::tokenizer_fixtures;

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The repository's public-domain text, and text made to trip a cutter: contractions after a cut point,
// runs of mixed whitespace, CJK and Greek without ASCII spaces, no-break and ideographic spaces, emoji,
// bytes that are not UTF-8, and "<|endoftext|>" next to spaces.
std::string adversarial() {
    return read_file(fs::path(REMAT_FIXTURES) / ".." / ".." / "data" / "founding-texts.txt") +
           "It's they're we'll I'd 'tis ' s 's\n\n\n  \t \r\n\v\f x  y   z\t\tw \n"
           "日本語のテキスト、句読点。改行\n次の行\t“引用” λόγος ἀρχῇ ἦν ὁ \xC2\xA0nbsp\xC2\xA0 x\xE3\x80\x80y \xE2\x80\x83" "em "
           "🤖 robots 🤖\n\xFF\xFE bad \xE3\x80 cut \xC3 x<|endoftext|> <|endoftext|>\n<|endoftext|>  doc two 3.14 1e-5 '99 "
           "x   <|endoftext|>   y<|endoft ext|> end. ";
}

void check_random_cuts(const Tokenizer& tok, const std::string& text, int cuts, std::uint32_t seed) {
    const Ids whole = tok.encode(text);
    std::mt19937 rng(seed);
    int cut_somewhere = 0;
    for (int k = 0; k < cuts; ++k) {
        // A prefix as a streaming reader holds it; the cut must hold whatever follows the prefix.
        const std::size_t end = std::uniform_int_distribution<std::size_t>(0, text.size())(rng);
        const std::size_t p = tok.last_safe_cut(std::string_view(text).substr(0, end));
        REQUIRE(p <= end);
        if (p == 0) continue;
        ++cut_somewhere;
        Ids halves = tok.encode(std::string_view(text).substr(0, p));
        const Ids right = tok.encode(std::string_view(text).substr(p));
        halves.insert(halves.end(), right.begin(), right.end());
        INFO("prefix of " << end << " bytes cut at " << p);
        REQUIRE(halves == whole);
    }
    CHECK(cut_somewhere > cuts / 2);
}

}  // namespace

TEST_CASE("last_safe_cut") {
    const Gpt2Tokenizer gpt2 = Gpt2Tokenizer::from_files(tokenizer_fixtures / "vocab.json", tokenizer_fixtures / "merges.txt");

    SUBCASE("GPT-2: random cuts of real and adversarial text give the ids of the whole") {
        std::string text;
        for (int i = 0; i < 3; ++i) text += adversarial();
        check_random_cuts(gpt2, text, 3000, 1);
    }
    SUBCASE("GPT-2: the cut is just before ASCII whitespace that follows a non-space character") {
        CHECK(gpt2.last_safe_cut("hello world") == 5);
        CHECK(gpt2.last_safe_cut("a b\nc") == 3);
        CHECK(gpt2.last_safe_cut("a  b") == 1);                // not between two spaces
        CHECK(gpt2.last_safe_cut("word") == 0);                // no whitespace
        CHECK(gpt2.last_safe_cut("a\xC2\xA0 b") == 0);          // after a no-break space
        CHECK(gpt2.last_safe_cut("\xE6\x97\xA5\n") == 3);      // after a CJK character
        CHECK(gpt2.last_safe_cut("x \xE3\x80") == 1);           // not after a broken sequence
        CHECK(gpt2.last_safe_cut("") == 0);
    }
    SUBCASE("an added token holding a space is never cut through") {
        remat::test::TempDir dir;
        nlohmann::json t = nlohmann::json::parse(read_file(tokenizer_fixtures / "tokenizer.json"));
        t["added_tokens"].push_back({{"id", 577}, {"content", "<|x y|>"}, {"special", true}});
        std::ofstream(dir.path / "tokenizer.json") << t.dump();
        const Gpt2Tokenizer spaced = Gpt2Tokenizer::from_tokenizer_json(dir.path / "tokenizer.json");
        CHECK(spaced.last_safe_cut("a <|x y|>") == 1);
        CHECK(spaced.last_safe_cut("a<|x y|> b c d") == 8);
        CHECK(spaced.last_safe_cut("a<|x y|> b") == 0);  // a token from byte 4 on could end past the text
        CHECK(spaced.last_safe_cut("a b<|x") == 0);  // "<|x" may become the token: wait for its end
        std::string text = adversarial() + " <|x y|> a<|x y|>b <|x y|>\n";
        text += text;
        check_random_cuts(spaced, text, 2000, 2);
    }
    SUBCASE("separators") {
        CHECK(gpt2.document_separator() == 576);
        CHECK_FALSE(ByteTokenizer().document_separator().has_value());
    }
    SUBCASE("raw bytes cut anywhere") {
        const ByteTokenizer bytes;
        CHECK(bytes.last_safe_cut("any\xFF text") == 9);
        check_random_cuts(bytes, adversarial(), 500, 3);
    }
}
