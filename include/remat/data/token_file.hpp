#pragma once
// Token files: a corpus tokenised once (`remat encode`), memory-mapped by training. Little-endian:
//
//     offset  size  field
//          0     8  magic "REMATTOK"
//          8     4  u32 version = 1
//         12     4  u32 bytes per id: 2 when the vocabulary has at most 65536 ids, else 4
//         16     8  u64 token count n
//         24     8  u64 tokenizer fingerprint (data/fingerprint.hpp)
//         32     8  u64 tokenizer vocabulary size (every id is below it)
//         40    24  zeros
//         64  n·w  the ids, documents joined by the tokenizer's document separator
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace remat::hf::detail {
class AtomicFile;
}

namespace remat::data {

inline constexpr std::size_t token_file_header_bytes = 64;
inline constexpr std::uint32_t token_file_version = 1;
// The extension `remat encode` suggests and a folder corpus reads (data/corpus.hpp).
inline constexpr const char* token_file_extension = ".tok";

struct TokenFileHeader {
    std::uint64_t tokens = 0;
    std::uint32_t id_bytes = 2;
    std::uint64_t fingerprint = 0;
    std::uint64_t vocab_size = 0;
};

// 2 when every id of a vocabulary of `vocab_size` fits in 16 bits, else 4.
std::uint32_t id_bytes_for(std::uint64_t vocab_size);

// Whether `path` is a readable file starting with the magic (a cheap look at 8 bytes: the CLI tells
// token files from text files with it). Never throws.
bool is_token_file(const std::filesystem::path& path);

// A token file, memory-mapped read-only and validated at open. Movable, not copyable; readable from
// several threads at once. The file must not shrink while open (the mapping would fault, as with any mmap).
class TokenFile {
public:
    // Throws FormatError naming the file: unreadable, shorter than the header, wrong magic or version,
    // an id width other than 2 or 4 or not the one the vocabulary needs, a vocabulary of 0 or above
    // 2^32, reserved bytes that are not zero, a count whose ids would not fit in 64 bits, or a size
    // other than 64 + count × width.
    static TokenFile open(const std::filesystem::path& path);

    TokenFile(TokenFile&&) noexcept;
    TokenFile& operator=(TokenFile&&) noexcept;
    ~TokenFile();

    const std::filesystem::path& path() const { return path_; }
    const TokenFileHeader& header() const { return header_; }
    std::uint64_t tokens() const { return header_.tokens; }

    // Ids first … first + n - 1 into out. ValueError when the range passes the end; FormatError
    // "<file>: token <position> is <id>, not below the vocabulary size <v>" for a stored id out of range
    // (checked as read, so opening never scans the file).
    void read(std::uint64_t first, std::size_t n, std::int64_t* out) const;

private:
    TokenFile() = default;
    std::filesystem::path path_;
    TokenFileHeader header_;
    // read() of n mapped bytes from `from`; a file truncated meanwhile (SIGBUS) is a FormatError.
    template <class Read>
    void guard(const std::byte* from, std::size_t n, Read&& read) const;
    const std::byte* map_ = nullptr;  // the whole file
    std::size_t map_bytes_ = 0;
};

// Streams ids into a token file atomically: they go to a temporary in the target's folder; commit()
// writes the header, syncs and renames over `path`. Destroyed without commit, the temporary is removed
// and the target untouched. Throws FormatError naming the target when a write fails.
class TokenFileWriter {
public:
    TokenFileWriter(const std::filesystem::path& path, std::uint64_t fingerprint, std::uint64_t vocab_size);
    TokenFileWriter(const TokenFileWriter&) = delete;
    TokenFileWriter& operator=(const TokenFileWriter&) = delete;
    ~TokenFileWriter();

    // ValueError naming the target for an id outside [0, vocab_size).
    void write(std::span<const std::int64_t> ids);
    // Ids already in the file's width and byte order (encode's workers narrow them in parallel).
    void write_raw(std::span<const std::byte> ids, std::uint64_t count);
    void commit();

    std::uint64_t tokens() const { return header_.tokens; }
    std::uint32_t id_bytes() const { return header_.id_bytes; }
    const std::filesystem::path& path() const { return path_; }

private:
    void flush();
    std::filesystem::path path_;
    TokenFileHeader header_;
    std::unique_ptr<hf::detail::AtomicFile> file_;
    std::vector<std::byte> buffer_;
};

// ids narrowed to `id_bytes` (2 or 4) little-endian bytes, appended to out. The ids must be in range.
void append_narrow(std::span<const std::int64_t> ids, std::uint32_t id_bytes, std::vector<std::byte>& out);

}  // namespace remat::data
