// libFuzzer target: tokenizer files through Gpt2Tokenizer and HfTokenizer. The first byte of the input
// says which file the rest is (mod 3): 0 tokenizer.json (read by both); 1 vocab.json, beside the
// fixture's merges.txt; 2 merges.txt, beside the fixture's vocab.json. Every input must give a tokenizer
// or a remat::Error; anything else is a finding. A Gpt2Tokenizer read must encode a sample text into ids
// below its vocab_size and decode them back to the text (byte-level BPE loses nothing); an HfTokenizer,
// whose pipeline may be anything the format allows, must encode into ids below its vocab_size and
// decode them without failing. Seeds: corpus/tokenizer/.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "remat/core/error.hpp"
#include "remat/text/hf_tokenizer.hpp"
#include "remat/text/tokenizer.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {
const fs::path fixtures = fs::path(REMAT_FIXTURES) / "tokenizer";
const std::string sample = "Hello world, it's 2026! \xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x99\x82\n\ttabs  and spaces <|endoftext|>x";

void check(const text::Gpt2Tokenizer& t) {
    const auto ids = t.encode(sample);
    for (std::int64_t id : ids)
        if (id < 0 || id >= t.vocab_size()) __builtin_trap();
    if (t.decode(ids) != sample) __builtin_trap();
}

void check(const text::HfTokenizer& t) {
    for (const auto& ids : {t.encode(sample), t.encode_with_special_tokens(sample)}) {
        for (std::int64_t id : ids)
            if (id < 0 || id >= t.vocab_size()) __builtin_trap();
        (void)t.decode_as_hf(ids, true);
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static fuzz::MemoryFile file;
    const fs::path path = file.hold(data + 1, size - 1);
    try {
        switch (data[0] % 3) {
            case 0:
                try {
                    check(text::HfTokenizer::from_files(path, std::nullopt));
                } catch (const Error&) {
                }
                check(text::Gpt2Tokenizer::from_tokenizer_json(path));
                break;
            case 1: check(text::Gpt2Tokenizer::from_files(path, fixtures / "merges.txt")); break;
            default: check(text::Gpt2Tokenizer::from_files(fixtures / "vocab.json", path)); break;
        }
    } catch (const Error&) {
    }
    return 0;
}
