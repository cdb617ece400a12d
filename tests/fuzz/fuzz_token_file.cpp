// libFuzzer target: the token-file reader (header checks, exact size) and reading every id of a file
// it accepts, in windows. Any exception other than remat's typed ones is a finding, as is any read past
// the mapping (sanitizers) or an id handed out at or above the stored vocabulary size. Seeds:
// corpus/token_file/ (tests/fuzz/make_seeds.py).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/data/token_file.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static fuzz::MemoryFile file;
    try {
        const auto f = data::TokenFile::open(file.hold(data, size));
        if (data::token_file_header_bytes + f.tokens() * f.header().id_bytes != size) __builtin_trap();
        std::vector<std::int64_t> ids(7);
        for (std::uint64_t at = 0; at < f.tokens(); at += ids.size()) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ids.size(), f.tokens() - at));
            try {
                f.read(at, n, ids.data());
                for (std::size_t i = 0; i < n; ++i)
                    if (ids[i] < 0 || static_cast<std::uint64_t>(ids[i]) >= f.header().vocab_size) __builtin_trap();
            } catch (const FormatError&) {  // an id out of range, named with its position
            }
        }
        try {  // past the end is refused, never read
            f.read(f.tokens(), 1, ids.data());
            __builtin_trap();
        } catch (const ValueError&) {
        }
    } catch (const FormatError&) {
    }
    return 0;
}
