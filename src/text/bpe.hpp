#pragma once
// The tables of a byte-level BPE tokenizer and the merge loop over one pre-token (private to src/text).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace remat::text::detail {

struct Merge {
    std::int32_t rank;    // position in the merges list: lower merges first
    std::int32_t merged;  // id of the concatenation
};

// Merges by the ids of their two parts (pair_key).
using MergeTable = std::unordered_map<std::uint64_t, Merge>;
inline std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32 | static_cast<std::uint32_t>(right);
}
inline const Merge* find_merge(const MergeTable& merges, std::int32_t left, std::int32_t right) {
    auto it = merges.find(pair_key(left, right));
    return it == merges.end() ? nullptr : &it->second;
}

// tokenizers' AddedToken: matched literally in the text before the model sees it.
struct AddedToken {
    std::string content;  // UTF-8
    std::int32_t id;
    bool special = false;      // left out by decode's skip_special_tokens
    bool normalized = false;   // matched in the normalized text (content normalized too), not the raw text
    bool lstrip = false;       // the match takes the white space before it
    bool rstrip = false;       // ... and after it
    bool single_word = false;  // only where no word character touches it on either side
};

struct Gpt2Tables {
    std::string source;                     // "vocab.json + merges.txt" or "tokenizer.json", for describe()
    std::array<std::int32_t, 256> byte_id;  // id of each byte's one-symbol token
    MergeTable merges;
    std::vector<AddedToken> added;                              // split out of the text before the regex
    std::unordered_map<std::int32_t, std::string> bytes_of_id;  // what decode writes for each id
    std::int64_t vocab_size = 0;                                // largest id + 1

    const Merge* find_merge(std::int32_t left, std::int32_t right) const { return detail::find_merge(merges, left, right); }
};

// Scratch space of bpe_encode, reused across the pieces of one text.
struct BpeWorkspace {
    struct Candidate {
        std::int32_t rank, position;
    };
    std::vector<std::int32_t> id, next, prev;  // a linked list of symbols, indexed by first byte
    std::vector<Candidate> heap;
    std::vector<std::int32_t> batch;
};

// Appends the ids of one pre-token, given as its raw bytes.
void bpe_encode(const Gpt2Tables& tables, std::string_view piece, BpeWorkspace& work, std::vector<std::int64_t>& out);

}  // namespace remat::text::detail
