#pragma once
// Text into token files, streaming: `remat encode` and data::TokenCorpus::encode_text run this.
//
// Documents: an input that is a file is one document; a folder gives every regular file under it,
// recursively, sorted by path (byte order of the path below the folder), skipping names that start
// with "." (and folders so named). Documents are joined by the tokenizer's document_separator(), or
// as they are when it has none (raw bytes). A document is read in chunks of chunk_bytes and cut only
// where the tokenizer says a cut cannot change the ids (Tokenizer::last_safe_cut), so the ids equal
// tokenising each document at once. A stretch with no safe cut grows the chunk up to max_chunk_bytes;
// past that it is cut anyway at a character boundary, with a warning naming the document and the
// offset (the ids next to that one cut may differ from tokenising at once). Chunks, of one document or
// several, are encoded on up to `threads` threads and written in order; memory stays bounded by a few
// chunks per thread, whatever the corpus or a document's size.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "remat/text/tokenizer.hpp"

namespace remat::data {

struct EncodeProgress {
    std::uint64_t bytes_done = 0;
    std::uint64_t bytes_total = 0;  // of the inputs' sizes; pipes count 0
    std::uint64_t tokens = 0;
};

struct EncodeOptions {
    // The validation split, at most one of them: the last valid_docs documents in input order, or
    // the last documents holding the nearest to valid_fraction (in (0, 1)) of the input bytes — at
    // least one document, never all. Fewer than 2 documents with a split is a ValueError.
    std::optional<std::size_t> valid_docs;
    std::optional<double> valid_fraction;
    unsigned threads = 2;
    std::size_t chunk_bytes = std::size_t{1} << 20;
    std::size_t max_chunk_bytes = std::size_t{8} << 20;
    // Called on the calling thread after each chunk is written, and once at the end.
    std::function<void(const EncodeProgress&)> progress;
};

struct EncodedFile {
    std::filesystem::path path;
    std::size_t documents = 0;
    std::uint64_t bytes = 0;   // text bytes in
    std::uint64_t tokens = 0;  // ids out, separators included
};

struct EncodeReport {
    EncodedFile train;
    std::optional<EncodedFile> valid;  // out + ".valid" when there is a split
    double seconds = 0;
    std::vector<std::string> warnings;  // forced cuts
    std::size_t documents() const { return train.documents + (valid ? valid->documents : 0); }
    std::uint64_t bytes() const { return train.bytes + (valid ? valid->bytes : 0); }
    std::uint64_t tokens() const { return train.tokens + (valid ? valid->tokens : 0); }
};

// The documents of `inputs`, in order (rules above). ValueError naming an input that does not exist
// or is neither a file nor a folder; ValueError when there is no document at all.
std::vector<std::filesystem::path> list_documents(const std::vector<std::filesystem::path>& inputs);

// Encodes the documents of `inputs` into the token file `out` (and `out`.valid), both written
// atomically: on any failure neither is created or changed. `fingerprint` goes into the headers
// (data/fingerprint.hpp). Throws FormatError naming an unreadable document or an unwritable output,
// ValueError for a bad split.
EncodeReport encode(const text::Tokenizer& tokenizer, std::uint64_t fingerprint, const std::vector<std::filesystem::path>& inputs,
                    const std::filesystem::path& out, const EncodeOptions& options = {});

// The path of the validation file for `out`: out + ".valid".
std::filesystem::path valid_path(const std::filesystem::path& out);

namespace detail {
// The streaming core: the documents' ids, narrowed to id_bytes, handed in order to sink(output, bytes,
// count) — output 0 for the training documents, 1 for the last `valid_documents` ones. Documents may be
// pipes (read sequentially, no size needed).
struct EncodeStats {
    std::size_t documents[2] = {0, 0};
    std::uint64_t bytes[2] = {0, 0};
    std::uint64_t tokens[2] = {0, 0};
    std::vector<std::string> warnings;
};
EncodeStats encode_stream(const text::Tokenizer& tokenizer, const std::vector<std::filesystem::path>& documents,
                          std::size_t valid_documents, std::uint32_t id_bytes, const EncodeOptions& options,
                          const std::function<void(int output, const std::vector<std::byte>& ids, std::uint64_t count)>& sink);
}  // namespace detail

}  // namespace remat::data
