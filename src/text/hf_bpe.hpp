#pragma once
// tokenizers' BPE model, as tokenizer.json describes it (private to src/text): a piece's characters
// become vocabulary symbols (or byte-fallback tokens, or unk), then merges apply, lowest rank first.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/text/bpe.hpp"

namespace remat::text::detail {

struct HfBpe {
    std::unordered_map<std::string, std::int32_t> id_of;
    MergeTable merges;
    std::optional<std::int32_t> unk;                  // model.unk_token's id
    bool fuse_unk = false;                            // consecutive unknown characters become one unk
    bool byte_fallback = false;                       // unknown characters become their bytes' "<0xNN>" tokens
    bool ignore_merges = false;                       // a piece that is a vocabulary token is that token
    std::array<std::int32_t, 256> byte_tokens{};      // "<0x00>".."<0xFF>"'s ids, -1 where missing

    const Merge* find_merge(std::int32_t left, std::int32_t right) const { return detail::find_merge(merges, left, right); }
    // Appends the ids of one pre-tokenized piece (valid UTF-8, not empty).
    void tokenize(std::string_view piece, std::vector<std::int64_t>& out) const;
};

}  // namespace remat::text::detail
