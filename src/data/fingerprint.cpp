#include "remat/data/fingerprint.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "remat/core/error.hpp"

namespace remat::data {

namespace fs = std::filesystem;

namespace {

struct Fnv1a {
    std::uint64_t h = raw_bytes_fingerprint;
    void add(const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    }
};

}  // namespace

std::uint64_t tokenizer_fingerprint(const fs::path& folder) {
    // Sorted by name; tokenizer_config.json (HF's special-token and casing settings) changes ids too.
    static constexpr const char* names[] = {"merges.txt", "tokenizer.json", "tokenizer_config.json", "vocab.json", "vocab.txt"};
    Fnv1a hash;
    for (const char* name : names) {
        const fs::path path = folder / name;
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) continue;
        std::FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) {
            const int error = errno;
            throw FormatError(path.string() + ": cannot read: " + std::generic_category().message(error));
        }
        const std::uint64_t size = fs::file_size(path, ec);
        std::array<unsigned char, 8> size_le{};
        for (std::size_t i = 0; i < 8; ++i) size_le[i] = static_cast<unsigned char>(size >> (8 * i));
        hash.add(name, std::strlen(name) + 1);
        hash.add(size_le.data(), size_le.size());
        std::array<char, 1 << 16> buffer;
        std::size_t n;
        while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) hash.add(buffer.data(), n);
        const bool failed = std::ferror(f);
        std::fclose(f);
        if (failed) throw FormatError(path.string() + ": cannot read");
    }
    return hash.h;
}

std::string format_fingerprint(std::uint64_t fingerprint) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fingerprint));
    return text;
}

}  // namespace remat::data
