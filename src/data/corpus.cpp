#include "remat/data/corpus.hpp"

#include <algorithm>
#include <optional>

#include "remat/core/error.hpp"
#include "remat/data/encode.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/data/token_file.hpp"

namespace remat::data {

namespace fs = std::filesystem;

// One file's ids: memory-mapped, or encoded into memory.
struct TokenCorpus::Part {
    std::optional<TokenFile> file;
    std::vector<std::byte> memory;
    std::uint32_t id_bytes = 2;
    std::uint64_t tokens = 0;

    void read(std::uint64_t first, std::size_t n, std::int64_t* out) const {
        if (file) return file->read(first, n, out);
        const std::byte* p = memory.data() + first * id_bytes;
        for (std::size_t i = 0; i < n; ++i) {
            std::uint64_t v = 0;
            for (std::size_t b = id_bytes; b-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(p[i * id_bytes + b]);
            out[i] = static_cast<std::int64_t>(v);
        }
    }
};

TokenCorpus::TokenCorpus() = default;
TokenCorpus::TokenCorpus(TokenCorpus&&) noexcept = default;
TokenCorpus& TokenCorpus::operator=(TokenCorpus&&) noexcept = default;
TokenCorpus::~TokenCorpus() = default;

std::size_t TokenCorpus::files() const { return parts_.size(); }

TokenCorpus TokenCorpus::open(const fs::path& path, std::uint64_t expected_fingerprint, const std::string& tokenizer_description) {
    TokenCorpus corpus;
    corpus.name_ = path.string();
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
            if (it->path().extension() == token_file_extension && it->is_regular_file(ec)) files.push_back(it->path());
        if (ec) throw FormatError(path.string() + ": cannot list the folder: " + ec.message());
        if (files.empty())
            throw FormatError(path.string() + ": a folder without token files (*" + token_file_extension +
                              "; remat encode writes them)");
        std::sort(files.begin(), files.end());
    } else {
        files.push_back(path);
    }
    for (const fs::path& f : files) {
        auto part = std::make_unique<Part>();
        part->file.emplace(TokenFile::open(f));
        const TokenFileHeader& h = part->file->header();
        if (h.fingerprint != expected_fingerprint)
            throw FormatError(f.string() + " was encoded with tokenizer " + format_fingerprint(h.fingerprint) + ", this model's is " +
                              format_fingerprint(expected_fingerprint) + " (" + tokenizer_description + ")");
        part->id_bytes = h.id_bytes;
        part->tokens = h.tokens;
        corpus.tokens_ += h.tokens;
        corpus.parts_.push_back(std::move(part));
    }
    return corpus;
}

TokenCorpus TokenCorpus::encode_text(const fs::path& path, const text::Tokenizer& tokenizer) {
    TokenCorpus corpus;
    corpus.name_ = path.string();
    auto part = std::make_unique<Part>();
    part->id_bytes = id_bytes_for(static_cast<std::uint64_t>(tokenizer.vocab_size()));
    detail::encode_stream(tokenizer, {path}, 0, part->id_bytes, {},
                          [&](int, const std::vector<std::byte>& ids, std::uint64_t count) {
                              part->memory.insert(part->memory.end(), ids.begin(), ids.end());
                              part->tokens += count;
                          });
    part->memory.shrink_to_fit();
    corpus.tokens_ = part->tokens;
    corpus.parts_.push_back(std::move(part));
    return corpus;
}

std::uint64_t TokenCorpus::windows(std::size_t T) const {
    if (T == 0) throw ValueError(name_ + ": windows of 0 tokens");
    std::uint64_t n = 0;
    for (const auto& part : parts_) n += part->tokens / T;
    return n;
}

void TokenCorpus::window(std::uint64_t index, std::size_t T, std::int64_t* out) const {
    if (T == 0) throw ValueError(name_ + ": windows of 0 tokens");
    std::uint64_t i = index;
    for (const auto& part : parts_) {
        const std::uint64_t in_part = part->tokens / T;
        if (i < in_part) return part->read(i * T, T, out);
        i -= in_part;
    }
    throw ValueError(name_ + ": window " + std::to_string(index) + " of " + std::to_string(windows(T)) + " windows of " +
                     std::to_string(T) + " tokens");
}

}  // namespace remat::data
