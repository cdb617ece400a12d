// `remat encode` as a user runs it: the files it writes read back as tokenising each document, the
// lines it prints, and one error line with exit code 2 for every mistake.
#include <doctest/doctest.h>

#include "remat/data/fingerprint.hpp"
#include "remat/data/token_file.hpp"
#include "remat/text/hf_tokenizer.hpp"
#include "remat/text/tokenizer.hpp"
#include "tests/cli/run_remat.hpp"

using namespace cli_test;

namespace {

std::vector<std::int64_t> read_tokens(const fs::path& p) {
    const remat::data::TokenFile f = remat::data::TokenFile::open(p);
    std::vector<std::int64_t> ids(f.tokens());
    f.read(0, ids.size(), ids.data());
    return ids;
}

}  // namespace

TEST_CASE("encode") {
    const fs::path dir = scratch() / "encode";
    const fs::path tokdir = fixtures / "tokenizer";
    write_text(dir / "docs" / "1.txt", read_text(fs::path(REMAT_FIXTURES) / ".." / ".." / "data" / "founding-texts.txt"));
    write_text(dir / "docs" / "2.txt", "The second document.\n");
    const auto tokenizer = remat::text::HfTokenizer::from_folder(tokdir);  // tokenizer.json goes first, as in HF
    const std::string fingerprint = remat::data::format_fingerprint(remat::data::tokenizer_fingerprint(tokdir));

    SUBCASE("a tokenizer folder, a folder of documents and a validation split") {
        const fs::path out = dir / "corpus.tok";
        const Result r = run_remat({"encode", tokdir.string(), (dir / "docs").string(), "-o", out.string(), "--valid-docs", "1"});
        CAPTURE(r.err);
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        const auto train = tokenizer.encode(read_text(dir / "docs" / "1.txt"));
        const auto valid = tokenizer.encode("The second document.\n");
        CHECK(read_tokens(out) == train);
        CHECK(read_tokens(out.string() + ".valid") == valid);
        CHECK(has_line(r.out, "tokenizer: " + tokenizer.describe() + ", fingerprint " + fingerprint));
        CHECK(has_line(r.out, "train: " + out.string() + "  " + std::to_string(train.size()) + " tokens  1 document  3471 bytes"));
        CHECK(has_line(r.out, "valid: " + out.string() + ".valid  " + std::to_string(valid.size()) + " tokens  1 document  21 bytes"));
        CHECK(r.out.find("encoded 3492 bytes into " + std::to_string(train.size() + valid.size()) + " tokens in ") != std::string::npos);
        CHECK(r.out.find("\r") == std::string::npos);  // no live progress line off a terminal
    }
    SUBCASE("a model folder without tokenizer files: raw bytes, with the folder's warning") {
        const fs::path model = dir / "model";
        fs::create_directories(model);
        const Result init = run_remat({"init", model.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "8", "--n-head", "2",
                                       "--vocab-size", "256", "--n-positions", "16"});
        REQUIRE(init.code == 0);
        const fs::path out = dir / "bytes.tok";
        const Result r = run_remat({"encode", model.string(), (dir / "docs" / "2.txt").string(), (dir / "docs" / "2.txt").string(),
                                    "--out", out.string()});
        CHECK(r.code == 0);
        CHECK(r.err == "warning: " + model.string() + " has no vocab.json + merges.txt or tokenizer.json: using raw bytes as token ids\n");
        const std::string doc = "The second document.\n";
        std::vector<std::int64_t> want;
        for (unsigned char c : doc + doc) want.push_back(c);
        CHECK(read_tokens(out) == want);
        CHECK(remat::data::TokenFile::open(out).header().fingerprint == remat::data::raw_bytes_fingerprint);
    }
    SUBCASE("an output without .tok is written, with a warning") {
        const Result r = run_remat({"encode", tokdir.string(), (dir / "docs" / "2.txt").string(), "-o", (dir / "x.bin").string()});
        CHECK(r.code == 0);
        CHECK(r.err == "warning: " + (dir / "x.bin").string() + " does not end in .tok: a folder of token files is read by its *.tok files only\n");
    }
    SUBCASE("every mistake is one error line, and nothing is written") {
        const std::string docs = (dir / "docs").string(), out = (dir / "bad.tok").string();
        check_error({"encode"}, "TOKDIR is required (see remat encode --help)");
        check_error({"encode", tokdir.string(), docs}, "--out is required (see remat encode --help)");
        check_error({"encode", tokdir.string(), docs, "-o", out, "--valid-docs", "1", "--valid-fraction", "0.5"},
                    "--valid-fraction excludes --valid-docs (see remat encode --help)");
        check_error({"encode", tokdir.string(), docs, "-o", out, "--valid-docs", "0"},
                    "--valid-docs must be a whole number from 1 to 1099511627776, got \"0\"");
        check_error({"encode", tokdir.string(), docs, "-o", out, "--valid-docs", "2"},
                    "encode: 2 validation documents of 2: give at least 1 and at most 1");
        check_error({"encode", tokdir.string(), docs, "-o", out, "--valid-fraction", "1"},
                    "--valid-fraction must be below 1 (some documents must stay for training), got \"1\"");
        check_error({"encode", tokdir.string(), (dir / "docs" / "2.txt").string(), "-o", out, "--valid-fraction", "0.5"},
                    "encode: a validation split needs at least 2 documents (one to train on, one to validate), but the inputs hold 1");
        check_error({"encode", tokdir.string(), (dir / "missing.txt").string(), "-o", out},
                    (dir / "missing.txt").string() + ": no such file or folder");
        check_error({"encode", docs, docs, "-o", out},
                    docs + ": neither a model folder (config.json) nor a tokenizer folder (tokenizer.json, "
                           "vocab.json + merges.txt, or BERT's vocab.txt)");
        check_error({"encode", (dir / "nope").string(), docs, "-o", out},
                    (dir / "nope").string() + ": not a folder (give a model folder or a tokenizer folder)");
        check_error({"encode", (fixtures / "gpt2-tiny").string(), docs, "-o", out},
                    (fixtures / "gpt2-tiny").string() +
                        " has no vocab.json + merges.txt or tokenizer.json, and raw bytes as token ids need a vocab_size of 256, but the model's is 64");
        CHECK_FALSE(fs::exists(out));
        CHECK_FALSE(fs::exists(out + ".valid"));
    }
}
