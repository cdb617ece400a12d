// data::encode: the ids read back equal tokenising each document at once and joining them with the
// separator, however small the chunks and however many threads; splits, folders and failures.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/data/corpus.hpp"
#include "remat/data/encode.hpp"
#include "remat/data/token_file.hpp"
#include "remat/text/tokenizer.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
using namespace remat::data;
namespace fs = std::filesystem;
using Ids = std::vector<std::int64_t>;

namespace {

using test::tokenizer_fixtures;

using test::read_text;
using test::write_bytes;

Ids read_ids(const fs::path& p) {
    const TokenFile f = TokenFile::open(p);
    Ids ids(f.tokens());
    f.read(0, ids.size(), ids.data());
    return ids;
}

Ids expected(const text::Tokenizer& tok, const std::vector<std::string>& docs) {
    Ids ids;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        if (i > 0 && tok.document_separator()) ids.push_back(*tok.document_separator());
        const Ids d = tok.encode(docs[i]);
        ids.insert(ids.end(), d.begin(), d.end());
    }
    return ids;
}

// Documents of real text with the awkward parts: long runs without a safe cut, CJK, "<|endoftext|>"
// inside a document, bytes that are not UTF-8, an empty document.
std::vector<std::string> documents() {
    const std::string base = read_text(fs::path(REMAT_FIXTURES) / ".." / ".." / "data" / "founding-texts.txt");
    std::vector<std::string> docs;
    docs.push_back(base);
    docs.push_back(base.substr(100, 900) + " It's <|endoftext|> inside\n\n\t 日本語のテキスト。\n\xFF\xC3 end");
    docs.push_back("");
    docs.push_back(std::string(3000, 'a') + " " + std::string(500, ' ') + "x");
    docs.push_back(base + base + "\n");
    return docs;
}

EncodeOptions valid_docs(std::size_t n) {
    EncodeOptions o;
    o.valid_docs = n;
    return o;
}
EncodeOptions valid_fraction(double f) {
    EncodeOptions o;
    o.valid_fraction = f;
    return o;
}
EncodeOptions chunks(unsigned threads, std::size_t chunk, std::size_t max) {
    EncodeOptions o;
    o.threads = threads;
    o.chunk_bytes = chunk;
    o.max_chunk_bytes = max;
    return o;
}

}  // namespace

TEST_CASE("encode: round trip") {
    test::TempDir dir;
    const std::vector<std::string> docs = documents();
    std::vector<fs::path> inputs;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        inputs.push_back(dir.path / ("doc" + std::to_string(i) + ".txt"));
        write_bytes(inputs.back(), docs[i]);
    }
    const text::Gpt2Tokenizer gpt2 = text::Gpt2Tokenizer::from_files(tokenizer_fixtures / "vocab.json", tokenizer_fixtures / "merges.txt");
    const text::ByteTokenizer bytes;
    for (const text::Tokenizer* tok : {static_cast<const text::Tokenizer*>(&gpt2), static_cast<const text::Tokenizer*>(&bytes)}) {
        const Ids want = expected(*tok, docs);
        for (unsigned threads : {1u, 2u})
            for (std::size_t chunk : {std::size_t{7}, std::size_t{64}, std::size_t{1} << 20}) {
                CAPTURE(tok->describe());
                CAPTURE(threads);
                CAPTURE(chunk);
                const fs::path out = dir.path / "out.tok";
                std::uint64_t last_tokens = 0, calls = 0;
                EncodeOptions options = chunks(threads, chunk, 4096);
                options.progress = [&](const EncodeProgress& p) {
                    CHECK(p.tokens >= last_tokens);
                    last_tokens = p.tokens;
                    ++calls;
                };
                const EncodeReport r = encode(*tok, 99, inputs, out, options);
                CHECK(read_ids(out) == want);
                CHECK(r.train.documents == docs.size());
                CHECK(r.train.tokens == want.size());
                std::uint64_t total = 0;
                for (const std::string& d : docs) total += d.size();
                CHECK(r.train.bytes == total);
                CHECK(r.warnings.empty());
                CHECK(last_tokens == want.size());
                CHECK(calls > (chunk == 7 ? 100u : 0u));
                CHECK(TokenFile::open(out).header().fingerprint == 99);
                CHECK_FALSE(fs::exists(valid_path(out)));
            }
    }
}

TEST_CASE("encode: a stretch with no safe cut is cut anyway at the bound, with a warning") {
    test::TempDir dir;
    const text::Gpt2Tokenizer gpt2 = text::Gpt2Tokenizer::from_files(tokenizer_fixtures / "vocab.json", tokenizer_fixtures / "merges.txt");
    const fs::path doc = dir.path / "long.txt";
    write_bytes(doc, std::string(10000, 'x'));
    const EncodeReport r = encode(gpt2, 1, {doc}, dir.path / "o.tok", chunks(2, 100, 1000));
    REQUIRE(r.warnings.size() >= 9);
    CHECK(r.warnings[0] == doc.string() + ": no place to cut without changing the ids in 1000 bytes from byte 0; cut at byte 999 anyway "
                                          "(the ids next to it may differ from encoding the document at once)");
    CHECK(gpt2.decode(read_ids(dir.path / "o.tok")) == std::string(10000, 'x'));
}

TEST_CASE("encode: folders, validation splits and failures") {
    test::TempDir dir;
    const text::ByteTokenizer bytes;
    write_bytes(dir.path / "in" / "b.txt", "bb");
    write_bytes(dir.path / "in" / "a.txt", "a");
    write_bytes(dir.path / "in" / "sub" / "c.txt", "cccc");
    write_bytes(dir.path / "in" / ".hidden", "h");
    write_bytes(dir.path / "in" / ".git" / "x.txt", "g");
    write_bytes(dir.path / "d.txt", "dddddddd");
    const std::vector<fs::path> inputs = {dir.path / "in", dir.path / "d.txt"};

    SUBCASE("a folder's files, recursively, sorted by path, hidden ones skipped") {
        CHECK(list_documents(inputs) == std::vector<fs::path>{dir.path / "in" / "a.txt", dir.path / "in" / "b.txt",
                                                               dir.path / "in" / "sub" / "c.txt", dir.path / "d.txt"});
        encode(bytes, 1, inputs, dir.path / "o.tok");
        CHECK(bytes.decode(read_ids(dir.path / "o.tok")) == "abbccccdddddddd");
    }
    SUBCASE("--valid-docs: the last N documents") {
        const EncodeReport r = encode(bytes, 1, inputs, dir.path / "o.tok", valid_docs(2));
        CHECK(bytes.decode(read_ids(dir.path / "o.tok")) == "abb");
        CHECK(bytes.decode(read_ids(dir.path / "o.tok.valid")) == "ccccdddddddd");
        REQUIRE(r.valid);
        CHECK(r.valid->path == dir.path / "o.tok.valid");
        CHECK(r.valid->documents == 2);
        CHECK(r.train.documents == 2);
        CHECK(r.valid->tokens == 12);
    }
    SUBCASE("--valid-fraction: the last documents nearest the fraction of bytes, at least one, never all") {
        CHECK(encode(bytes, 1, inputs, dir.path / "o.tok", valid_fraction(0.5)).valid->documents == 1);  // 8 of 15
        CHECK(encode(bytes, 1, inputs, dir.path / "o.tok", valid_fraction(0.8)).valid->documents == 2);  // 12 of 15
        CHECK(encode(bytes, 1, inputs, dir.path / "o.tok", valid_fraction(0.01)).valid->documents == 1);
        CHECK(encode(bytes, 1, inputs, dir.path / "o.tok", valid_fraction(0.99)).valid->documents == 3);
    }
    SUBCASE("GPT-2: documents of each file are joined by <|endoftext|>, each file starts without one") {
        const text::Gpt2Tokenizer gpt2 = text::Gpt2Tokenizer::from_files(tokenizer_fixtures / "vocab.json", tokenizer_fixtures / "merges.txt");
        encode(gpt2, 1, inputs, dir.path / "o.tok", valid_docs(2));
        CHECK(gpt2.decode(read_ids(dir.path / "o.tok")) == "a<|endoftext|>bb");
        CHECK(gpt2.decode(read_ids(dir.path / "o.tok.valid")) == "cccc<|endoftext|>dddddddd");
    }
    SUBCASE("bad splits and inputs, and nothing is written") {
        const fs::path out = dir.path / "o.tok";
        CHECK_THROWS_WITH_AS(encode(bytes, 1, {dir.path / "d.txt"}, out, valid_docs(1)),
                             "encode: a validation split needs at least 2 documents (one to train on, one to validate), but the inputs hold 1",
                             ValueError);
        CHECK_THROWS_WITH_AS(encode(bytes, 1, inputs, out, valid_docs(4)),
                             "encode: 4 validation documents of 4: give at least 1 and at most 3", ValueError);
        EncodeOptions both = valid_docs(1);
        both.valid_fraction = 0.1;
        CHECK_THROWS_AS(encode(bytes, 1, inputs, out, both), ValueError);
        CHECK_THROWS_AS(encode(bytes, 1, inputs, out, valid_fraction(1.0)), ValueError);
        CHECK_THROWS_WITH_AS(encode(bytes, 1, {dir.path / "nope"}, out), ((dir.path / "nope").string() + ": no such file or folder").c_str(),
                             ValueError);
        fs::create_directories(dir.path / "empty");
        CHECK_THROWS_WITH_AS(encode(bytes, 1, {dir.path / "empty"}, out),
                             ("no documents to encode: " + (dir.path / "empty").string() + " hold no files").c_str(), ValueError);
        CHECK_THROWS_AS(encode(bytes, 1, inputs, dir.path / "no-such-folder" / "o.tok"), FormatError);
        CHECK_FALSE(fs::exists(out));
        CHECK_FALSE(fs::exists(valid_path(out)));
    }
}

TEST_CASE("encode: a pipe is read as it comes") {
    test::TempDir dir;
    const text::ByteTokenizer bytes;
    const fs::path fifo = dir.path / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << std::string(100000, 'p'); });
    const TokenCorpus corpus = TokenCorpus::encode_text(fifo, bytes);
    writer.join();
    CHECK(corpus.tokens() == 100000);
    CHECK(corpus.name() == fifo.string());
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // wrote nothing
}
