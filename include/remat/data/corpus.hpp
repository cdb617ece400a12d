#pragma once
// The training stream: token ids from a token file, a folder of token files, or a text encoded on the
// fly, cut into windows of T consecutive tokens. A window never crosses from one file of a folder into
// the next (each file holds floor(n / T) windows; its last n mod T tokens are never seen) but does cross
// the documents inside a file, as the separator between them is part of the stream.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "remat/text/tokenizer.hpp"

namespace remat::data {

class TokenCorpus {
public:
    // A token file, or a folder of them (its *.tok files, not recursive, sorted by name). FormatError:
    // a folder without *.tok files (naming the folder), a malformed file (TokenFile::open), a file
    // written for another tokenizer: "data.tok was encoded with tokenizer 0123456789abcdef, this model's
    // is fedcba9876543210 (<tokenizer_description>)".
    static TokenCorpus open(const std::filesystem::path& path, std::uint64_t expected_fingerprint,
                            const std::string& tokenizer_description);
    // A text file or a pipe (read sequentially, no seeking and no size needed) encoded in bounded chunks,
    // on two threads, into memory: 2 bytes per token when the vocabulary has at most 65536 ids, else 4.
    // Writes nothing. FormatError naming an unreadable file.
    static TokenCorpus encode_text(const std::filesystem::path& path, const text::Tokenizer& tokenizer);

    TokenCorpus(TokenCorpus&&) noexcept;
    TokenCorpus& operator=(TokenCorpus&&) noexcept;
    ~TokenCorpus();

    // The path given to open or encode_text, for messages.
    const std::string& name() const { return name_; }
    std::uint64_t tokens() const { return tokens_; }
    std::size_t files() const;  // 1 for a text or a token file
    // The number of windows of T tokens (T >= 1): the sum over the files of floor(n / T).
    std::uint64_t windows(std::size_t T) const;
    // Copies window `index` (< windows(T)) into out[0, T). ValueError for an index out of range;
    // FormatError naming the file and position for a stored id out of range.
    void window(std::uint64_t index, std::size_t T, std::int64_t* out) const;

private:
    struct Part;
    TokenCorpus();
    std::string name_;
    std::uint64_t tokens_ = 0;
    std::vector<std::unique_ptr<Part>> parts_;
};

}  // namespace remat::data
