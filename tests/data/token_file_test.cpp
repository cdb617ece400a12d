// Token files: the header byte for byte, atomic writing, and every malformed file refused with a
// message naming it — never a crash or a read past the end.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/data/token_file.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/read_text.hpp"

using namespace remat;
using namespace remat::data;
namespace fs = std::filesystem;
using Ids = std::vector<std::int64_t>;

namespace {

using test::read_text;
using test::write_bytes;

std::string le(std::uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i, v >>= 8) s += static_cast<char>(v & 0xFF);
    return s;
}

// A header as the format describes it, for hand-made files.
std::string header(std::uint64_t count, std::uint32_t width = 2, std::uint64_t vocab = 1000, std::uint32_t version = 1,
                   std::uint64_t fingerprint = 7) {
    std::string h = "REMATTOK" + le(version, 4) + le(width, 4) + le(count, 8) + le(fingerprint, 8) + le(vocab, 8);
    return h + std::string(64 - h.size(), '\0');
}

std::string error_of(const fs::path& p) {
    try {
        TokenFile::open(p);
    } catch (const FormatError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("TokenFile") {
    test::TempDir dir;

    SUBCASE("written and read back; the header byte for byte") {
        const fs::path path = dir.path / "a.tok";
        {
            TokenFileWriter w(path, 0x0123456789abcdefull, 50257);
            w.write(Ids{1, 50256, 0});
            w.write(Ids{42});
            w.commit();
        }
        const std::string bytes = read_text(path);
        CHECK(bytes.size() == 64 + 4 * 2);
        CHECK(bytes.substr(0, 64) == header(4, 2, 50257, 1, 0x0123456789abcdefull));
        CHECK(bytes.substr(64) == le(1, 2) + le(50256, 2) + le(0, 2) + le(42, 2));
        const TokenFile f = TokenFile::open(path);
        CHECK(f.tokens() == 4);
        CHECK(f.header().fingerprint == 0x0123456789abcdefull);
        Ids out(3);
        f.read(1, 3, out.data());
        CHECK(out == Ids{50256, 0, 42});
        CHECK_THROWS_AS(f.read(2, 3, out.data()), ValueError);
        CHECK(is_token_file(path));
    }
    SUBCASE("4 bytes per id above 65536 ids, 2 up to it") {
        CHECK(id_bytes_for(256) == 2);
        CHECK(id_bytes_for(65536) == 2);
        CHECK(id_bytes_for(65537) == 4);
        const fs::path path = dir.path / "wide.tok";
        TokenFileWriter w(path, 1, 100000);
        w.write(Ids{99999, 70000});
        w.commit();
        Ids out(2);
        TokenFile::open(path).read(0, 2, out.data());
        CHECK(out == Ids{99999, 70000});
        CHECK(fs::file_size(path) == 64 + 8);
    }
    SUBCASE("an empty file of ids") {
        const fs::path path = dir.path / "empty.tok";
        TokenFileWriter(path, 1, 256).commit();
        CHECK(TokenFile::open(path).tokens() == 0);
    }
    SUBCASE("atomic: nothing appears before commit, an uncommitted writer leaves the target as it was") {
        const fs::path path = dir.path / "b.tok";
        write_bytes(path, "old");
        {
            TokenFileWriter w(path, 1, 256);
            w.write(Ids{1, 2, 3});
            CHECK(read_text(path) == "old");
        }
        CHECK(read_text(path) == "old");
        CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temporary left
        TokenFileWriter w(path, 1, 256);
        CHECK_THROWS_WITH_AS(w.write(Ids{256}), doctest::Contains("token 0 is 256, outside the vocabulary [0, 256)"), ValueError);
    }
    SUBCASE("malformed files are refused by name") {
        const fs::path p = dir.path / "bad.tok";
        const std::string name = p.string();
        write_bytes(p, "");
        CHECK(error_of(p) == name + ": truncated: 0 bytes, shorter than a token file's 64-byte header");
        write_bytes(p, header(2).substr(0, 40));
        CHECK(error_of(p) == name + ": truncated: 40 bytes, shorter than a token file's 64-byte header");
        write_bytes(p, "NOTATOKEN" + header(0).substr(9));
        CHECK(error_of(p) == name + ": not a token file (its first 8 bytes are not \"REMATTOK\")");
        CHECK_FALSE(is_token_file(p));
        write_bytes(p, header(0, 2, 1000, 2));
        CHECK(error_of(p) == name + ": token file version 2, this remat reads version 1");
        write_bytes(p, header(0, 3));
        CHECK(error_of(p) == name + ": bytes per id is 3, expected 2 or 4");
        write_bytes(p, header(0, 4, 1000));
        CHECK(error_of(p) == name + ": bytes per id is 4, but a vocabulary of 1000 ids is stored with 2");
        write_bytes(p, header(0, 2, 0));
        CHECK(error_of(p) == name + ": vocabulary size 0 is not between 1 and 2^32");
        std::string reserved = header(0);
        reserved[50] = 1;
        write_bytes(p, reserved);
        CHECK(error_of(p) == name + ": header byte 50 is not zero (reserved)");
        write_bytes(p, header(3) + le(1, 2) + le(2, 2));
        CHECK(error_of(p) == name + ": truncated: 68 bytes, but 3 tokens of 2 bytes need 70");
        write_bytes(p, header(1) + le(1, 2) + le(2, 2));
        CHECK(error_of(p) == name + ": too long: 68 bytes, but 1 tokens of 2 bytes need 66");
        // A count whose size overflows 64 bits must not wrap around to the real size.
        write_bytes(p, header(0x8000000000000000ull) + le(1, 2) + le(2, 2));
        CHECK(error_of(p) == name + ": the header's token count 9223372036854775808 is impossibly large");
        write_bytes(p, header(0x7FFFFFFFFFFFFFDFull) + le(1, 2));
        CHECK(error_of(p).find("truncated") != std::string::npos);
        CHECK(error_of(dir.path / "missing.tok") == (dir.path / "missing.tok").string() + ": cannot read: No such file or directory");
        CHECK(error_of(dir.path) == dir.path.string() + ": is a folder, expected a file");
    }
    SUBCASE("an id at or above the stored vocabulary is reported with its position when read") {
        const fs::path p = dir.path / "ids.tok";
        write_bytes(p, header(3, 2, 1000) + le(5, 2) + le(999, 2) + le(1000, 2));
        const TokenFile f = TokenFile::open(p);  // opening does not scan
        Ids out(3);
        f.read(0, 2, out.data());
        CHECK(out[1] == 999);
        CHECK_THROWS_WITH_AS(f.read(0, 3, out.data()), (p.string() + ": token 2 is 1000, not below the vocabulary size 1000").c_str(),
                             FormatError);
    }
}

TEST_CASE("tokenizer_fingerprint") {
    test::TempDir dir;
    CHECK(tokenizer_fingerprint(dir.path) == raw_bytes_fingerprint);
    CHECK(format_fingerprint(0x0123456789abcdefull) == "0123456789abcdef");
    CHECK(format_fingerprint(1) == "0000000000000001");
    std::ofstream(dir.path / "vocab.json") << "{}";
    std::ofstream(dir.path / "config.json") << "{}";  // not a tokenizer file
    const std::uint64_t one = tokenizer_fingerprint(dir.path);
    CHECK(one != raw_bytes_fingerprint);
    // FNV-1a 64 of "vocab.json\0", the size as 8 bytes and "{}", as the header documents.
    std::uint64_t h = 0xcbf29ce484222325ull;
    const std::string bytes = std::string("vocab.json") + '\0' + le(2, 8) + "{}";
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
    CHECK(one == h);
    std::ofstream(dir.path / "config.json") << "{\"other\": 1}";
    CHECK(tokenizer_fingerprint(dir.path) == one);
    std::ofstream(dir.path / "merges.txt") << "#version: 0.2\n";
    CHECK(tokenizer_fingerprint(dir.path) != one);
}
