// TokenCorpus: windows over a token file, a folder of them and a text; tokenizer refusal by name.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/data/corpus.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/data/token_file.hpp"
#include "remat/text/tokenizer.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
using namespace remat::data;
namespace fs = std::filesystem;
using Ids = std::vector<std::int64_t>;

namespace {

void write_tokens(const fs::path& p, std::int64_t first, std::int64_t n, std::uint64_t fingerprint = 5) {
    TokenFileWriter w(p, fingerprint, 1000);
    Ids ids(static_cast<std::size_t>(n));
    std::iota(ids.begin(), ids.end(), first);
    w.write(ids);
    w.commit();
}

Ids window(const TokenCorpus& c, std::uint64_t i, std::size_t T) {
    Ids out(T);
    c.window(i, T, out.data());
    return out;
}

}  // namespace

TEST_CASE("TokenCorpus") {
    test::TempDir dir;

    SUBCASE("a token file: consecutive, non-overlapping windows") {
        write_tokens(dir.path / "a.tok", 0, 10);
        const TokenCorpus c = TokenCorpus::open(dir.path / "a.tok", 5, "test tokenizer");
        CHECK(c.tokens() == 10);
        CHECK(c.files() == 1);
        CHECK(c.windows(3) == 3);
        CHECK(c.windows(10) == 1);
        CHECK(c.windows(11) == 0);
        CHECK(window(c, 0, 3) == Ids{0, 1, 2});
        CHECK(window(c, 2, 3) == Ids{6, 7, 8});
        CHECK_THROWS_WITH_AS(window(c, 3, 3), (c.name() + ": window 3 of 3 windows of 3 tokens").c_str(), ValueError);
    }
    SUBCASE("a folder: its *.tok files by name, each contributing floor(n / T) windows") {
        fs::create_directories(dir.path / "f");
        write_tokens(dir.path / "f" / "2.tok", 200, 5);
        write_tokens(dir.path / "f" / "1.tok", 100, 7);
        write_tokens(dir.path / "f" / "1.tok.valid", 900, 50);  // not *.tok
        std::ofstream(dir.path / "f" / "notes.txt") << "x";
        const TokenCorpus c = TokenCorpus::open(dir.path / "f", 5, "test tokenizer");
        CHECK(c.files() == 2);
        CHECK(c.tokens() == 12);
        CHECK(c.windows(3) == 3);  // 2 from 1.tok (one token left over), 1 from 2.tok: never across files
        CHECK(window(c, 0, 3) == Ids{100, 101, 102});
        CHECK(window(c, 1, 3) == Ids{103, 104, 105});
        CHECK(window(c, 2, 3) == Ids{200, 201, 202});
    }
    SUBCASE("a folder without token files is an error naming it") {
        fs::create_directories(dir.path / "none");
        CHECK_THROWS_WITH_AS(TokenCorpus::open(dir.path / "none", 5, "t"),
                             ((dir.path / "none").string() + ": a folder without token files (*.tok; remat encode writes them)").c_str(),
                             FormatError);
    }
    SUBCASE("a file encoded for another tokenizer is refused by name") {
        write_tokens(dir.path / "data.tok", 0, 10, 0x0123456789abcdefull);
        CHECK_THROWS_WITH_AS(TokenCorpus::open(dir.path / "data.tok", 0xfedcba9876543210ull, "GPT-2 byte-level BPE (x, 3 tokens)"),
                             ((dir.path / "data.tok").string() +
                              " was encoded with tokenizer 0123456789abcdef, this model's is fedcba9876543210 (GPT-2 byte-level BPE (x, 3 tokens))")
                                 .c_str(),
                             FormatError);
    }
    SUBCASE("a text encoded in memory; nothing written next to it") {
        std::ofstream(dir.path / "t.txt") << "hello world";
        const TokenCorpus c = TokenCorpus::encode_text(dir.path / "t.txt", text::ByteTokenizer());
        CHECK(c.tokens() == 11);
        CHECK(c.windows(5) == 2);
        CHECK(window(c, 1, 5) == Ids{' ', 'w', 'o', 'r', 'l'});
        CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
        CHECK_THROWS_AS(TokenCorpus::encode_text(dir.path / "missing.txt", text::ByteTokenizer()), FormatError);
    }
}
