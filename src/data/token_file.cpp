#include "remat/data/token_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>
#include <utility>

#include "remat/core/error.hpp"
#include "remat/core/files.hpp"
#include "src/core/guarded_read.hpp"
#include "src/hf/atomic_file.hpp"

namespace remat::data {

namespace fs = std::filesystem;

namespace {

constexpr char magic[8] = {'R', 'E', 'M', 'A', 'T', 'T', 'O', 'K'};

std::uint64_t load_le(const std::byte* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

void store_le(std::byte* p, std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, v >>= 8) p[i] = static_cast<std::byte>(v & 0xFF);
}

std::array<std::byte, token_file_header_bytes> encode_header(const TokenFileHeader& h) {
    std::array<std::byte, token_file_header_bytes> bytes{};
    std::memcpy(bytes.data(), magic, sizeof magic);
    store_le(bytes.data() + 8, token_file_version, 4);
    store_le(bytes.data() + 12, h.id_bytes, 4);
    store_le(bytes.data() + 16, h.tokens, 8);
    store_le(bytes.data() + 24, h.fingerprint, 8);
    store_le(bytes.data() + 32, h.vocab_size, 8);
    return bytes;
}

[[noreturn]] void fail(const fs::path& path, const std::string& problem) { throw FormatError(path.string() + ": " + problem); }

[[noreturn]] void fail_errno(const fs::path& path, const char* what) {
    const int error = errno;
    fail(path, std::string(what) + ": " + std::generic_category().message(error));
}

}  // namespace

std::uint32_t id_bytes_for(std::uint64_t vocab_size) { return vocab_size <= 65536 ? 2 : 4; }

bool is_token_file(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char head[sizeof magic];
    const ssize_t n = ::read(fd, head, sizeof head);
    ::close(fd);
    return n == static_cast<ssize_t>(sizeof head) && std::memcmp(head, magic, sizeof magic) == 0;
}

// ------------------------------------------------------------------------------------------ reading

template <class Read>
void TokenFile::guard(const std::byte* from, std::size_t n, Read&& read) const {
    if (n == 0 || detail::guarded_read(from, n, read)) return;
    detail::throw_shrank(path_, map_bytes_);
}

TokenFile TokenFile::open(const fs::path& path) {
    TokenFile file;
    file.path_ = path;
    const ReadableFile opened = open_regular_file(path);  // a FIFO or a device is refused without blocking
    const auto size = static_cast<std::uint64_t>(opened.size());
    if (size < token_file_header_bytes)
        fail(path, "truncated: " + std::to_string(size) + " bytes, shorter than a token file's 64-byte header");
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, opened.fd(), 0);
    if (map == MAP_FAILED) fail_errno(path, "cannot map");
    file.map_ = static_cast<const std::byte*>(map);
    file.map_bytes_ = size;  // owned from here on: the destructor unmaps when a check below throws

    std::byte head[token_file_header_bytes];  // copied out: the file may be truncated while mapped
    file.guard(file.map_, sizeof head, [&] { std::memcpy(head, file.map_, sizeof head); });
    const std::byte* h = head;
    if (std::memcmp(h, magic, sizeof magic) != 0) fail(path, "not a token file (its first 8 bytes are not \"REMATTOK\")");
    const auto version = load_le(h + 8, 4);
    if (version != token_file_version)
        fail(path, "token file version " + std::to_string(version) + ", this remat reads version 1");
    TokenFileHeader& header = file.header_;
    header.id_bytes = static_cast<std::uint32_t>(load_le(h + 12, 4));
    header.tokens = load_le(h + 16, 8);
    header.fingerprint = load_le(h + 24, 8);
    header.vocab_size = load_le(h + 32, 8);
    if (header.id_bytes != 2 && header.id_bytes != 4)
        fail(path, "bytes per id is " + std::to_string(header.id_bytes) + ", expected 2 or 4");
    if (header.vocab_size == 0 || header.vocab_size > (std::uint64_t{1} << 32))
        fail(path, "vocabulary size " + std::to_string(header.vocab_size) + " is not between 1 and 2^32");
    if (header.id_bytes != id_bytes_for(header.vocab_size))
        fail(path, "bytes per id is " + std::to_string(header.id_bytes) + ", but a vocabulary of " +
                       std::to_string(header.vocab_size) + " ids is stored with " + std::to_string(id_bytes_for(header.vocab_size)));
    for (std::size_t i = 40; i < token_file_header_bytes; ++i)
        if (h[i] != std::byte{0}) fail(path, "header byte " + std::to_string(i) + " is not zero (reserved)");
    const std::uint64_t room = (std::numeric_limits<std::uint64_t>::max() - token_file_header_bytes) / header.id_bytes;
    if (header.tokens > room)
        fail(path, "the header's token count " + std::to_string(header.tokens) + " is impossibly large");
    const std::uint64_t expected = token_file_header_bytes + header.tokens * header.id_bytes;
    if (size != expected)
        fail(path, std::string(size < expected ? "truncated" : "too long") + ": " + std::to_string(size) + " bytes, but " +
                       std::to_string(header.tokens) + " tokens of " + std::to_string(header.id_bytes) + " bytes need " +
                       std::to_string(expected));
    return file;
}

TokenFile::TokenFile(TokenFile&& o) noexcept
    : path_(std::move(o.path_)), header_(o.header_), map_(std::exchange(o.map_, nullptr)), map_bytes_(std::exchange(o.map_bytes_, 0)) {}

TokenFile& TokenFile::operator=(TokenFile&& o) noexcept {
    if (this != &o) {
        if (map_) ::munmap(const_cast<std::byte*>(map_), map_bytes_);
        path_ = std::move(o.path_);
        header_ = o.header_;
        map_ = std::exchange(o.map_, nullptr);
        map_bytes_ = std::exchange(o.map_bytes_, 0);
    }
    return *this;
}

TokenFile::~TokenFile() {
    if (map_) ::munmap(const_cast<std::byte*>(map_), map_bytes_);
}

void TokenFile::read(std::uint64_t first, std::size_t n, std::int64_t* out) const {
    if (first > header_.tokens || n > header_.tokens - first)
        throw ValueError(path_.string() + ": tokens " + std::to_string(first) + " to " + std::to_string(first + n) +
                         " pass the end (" + std::to_string(header_.tokens) + " tokens)");
    const std::byte* p = map_ + token_file_header_bytes + first * header_.id_bytes;
    std::uint64_t bad = 0;  // any id >= vocab_size, found after the loop so that the loop stays simple
    guard(p, n * header_.id_bytes, [&] {
        if (header_.id_bytes == 2) {
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::int64_t>(load_le(p + 2 * i, 2));
        } else {
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::int64_t>(load_le(p + 4 * i, 4));
        }
    });
    for (std::size_t i = 0; i < n; ++i) bad |= static_cast<std::uint64_t>(out[i]) >= header_.vocab_size;
    if (bad)
        for (std::size_t i = 0; i < n; ++i)
            if (static_cast<std::uint64_t>(out[i]) >= header_.vocab_size)
                throw FormatError(path_.string() + ": token " + std::to_string(first + i) + " is " + std::to_string(out[i]) +
                                  ", not below the vocabulary size " + std::to_string(header_.vocab_size));
}

// ------------------------------------------------------------------------------------------ writing

void append_narrow(std::span<const std::int64_t> ids, std::uint32_t id_bytes, std::vector<std::byte>& out) {
    const std::size_t at = out.size();
    out.resize(at + ids.size() * id_bytes);
    std::byte* p = out.data() + at;
    for (std::size_t i = 0; i < ids.size(); ++i) store_le(p + i * id_bytes, static_cast<std::uint64_t>(ids[i]), id_bytes);
}

TokenFileWriter::TokenFileWriter(const fs::path& path, std::uint64_t fingerprint, std::uint64_t vocab_size) : path_(path) {
    if (vocab_size == 0 || vocab_size > (std::uint64_t{1} << 32))
        throw ValueError(path.string() + ": vocabulary size " + std::to_string(vocab_size) + " is not between 1 and 2^32");
    header_ = {.tokens = 0, .id_bytes = id_bytes_for(vocab_size), .fingerprint = fingerprint, .vocab_size = vocab_size};
    file_ = std::make_unique<hf::detail::AtomicFile>(path);
    const auto head = encode_header(header_);  // rewritten with the count by commit()
    file_->write(head);
    buffer_.reserve(1 << 20);
}

TokenFileWriter::~TokenFileWriter() = default;

void TokenFileWriter::write(std::span<const std::int64_t> ids) {
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || static_cast<std::uint64_t>(ids[i]) >= header_.vocab_size)
            throw ValueError(path_.string() + ": token " + std::to_string(header_.tokens + i) + " is " + std::to_string(ids[i]) +
                             ", outside the vocabulary [0, " + std::to_string(header_.vocab_size) + ")");
    append_narrow(ids, header_.id_bytes, buffer_);
    header_.tokens += ids.size();
    if (buffer_.size() >= (1 << 20)) flush();
}

void TokenFileWriter::write_raw(std::span<const std::byte> ids, std::uint64_t count) {
    if (ids.size() != count * header_.id_bytes)
        throw ValueError(path_.string() + ": " + std::to_string(ids.size()) + " bytes are not " + std::to_string(count) + " ids of " +
                         std::to_string(header_.id_bytes) + " bytes");
    flush();
    file_->write(ids);
    header_.tokens += count;
}

void TokenFileWriter::flush() {
    if (buffer_.empty()) return;
    file_->write(buffer_);
    buffer_.clear();
}

void TokenFileWriter::commit() {
    flush();
    const auto head = encode_header(header_);
    file_->write_at(0, head);
    file_->commit();
}

}  // namespace remat::data
