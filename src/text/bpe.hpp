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

inline std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32 | static_cast<std::uint32_t>(right);
}

// Merges by the ids of their two parts (pair_key), in one array probed linearly: the merge loop looks a
// pair up for every symbol, and Llama 3's 280,147 merges load in one allocation instead of one node each.
class MergeTable {
public:
    // Room for n merges, the table at most three quarters full.
    void reserve(std::size_t n);
    // Adds or replaces (a repeated pair keeps the later merge).
    void set(std::int32_t left, std::int32_t right, Merge merge);
    const Merge* find(std::int32_t left, std::int32_t right) const {
        if (slots_.empty()) return nullptr;
        const std::uint64_t key = pair_key(left, right);
        for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.key == key) return &s.merge;
            if (s.key == empty) return nullptr;
        }
    }
    std::size_t size() const { return size_; }

private:
    static constexpr std::uint64_t empty = ~std::uint64_t{0};  // pair_key(-1, -1): ids are never negative
    struct Slot {
        std::uint64_t key = empty;
        Merge merge{};
    };
    std::size_t slot_of(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_ & mask_; }
    std::vector<Slot> slots_;
    std::size_t mask_ = 0, size_ = 0;
    int shift_ = 0;
};
inline const Merge* find_merge(const MergeTable& merges, std::int32_t left, std::int32_t right) { return merges.find(left, right); }

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
