#include "src/text/hf_bpe.hpp"

#include <queue>

namespace remat::text::detail {

namespace {

std::size_t utf8_length(unsigned char lead) { return lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2; }

}  // namespace

// As tokenizers' BPE::merge_word and Word::merge_all (not GPT2Tokenizer's pass-per-rank loop, which
// bpe.cpp follows): one merge at a time from a heap of (rank, position), a merge's new pairs pushed at
// once, and a popped entry used only when the pair now at its position still makes the same token.
// The two orders agree on every merges list where a merge's parts come from earlier merges.
void HfBpe::tokenize(std::string_view piece, std::vector<std::int64_t>& out) const {
    if (ignore_merges)
        if (auto it = id_of.find(std::string(piece)); it != id_of.end()) {
            out.push_back(it->second);
            return;
        }

    struct Symbol {
        std::int32_t id;
        std::int32_t prev, next;  // -1 at the ends
        bool gone;                // merged into its left neighbour
    };
    std::vector<Symbol> symbols;
    symbols.reserve(piece.size());
    auto add = [&](std::int32_t id) {
        const auto n = static_cast<std::int32_t>(symbols.size());
        if (n > 0) symbols.back().next = n;
        symbols.push_back({id, n - 1, -1, false});
    };
    constexpr std::int32_t no_unk = -1;
    std::int32_t pending_unk = no_unk;  // fused unknown characters wait here
    std::string character;
    for (std::size_t i = 0; i < piece.size();) {
        const std::size_t n = std::min(utf8_length(static_cast<unsigned char>(piece[i])), piece.size() - i);
        character.assign(piece.substr(i, n));
        i += n;
        if (auto it = id_of.find(character); it != id_of.end()) {
            if (pending_unk != no_unk) add(pending_unk), pending_unk = no_unk;
            add(it->second);
            continue;
        }
        if (byte_fallback) {
            bool all = true;
            for (const char b : character) all = all && byte_tokens[static_cast<unsigned char>(b)] >= 0;
            if (all) {  // tokenizers adds them without flushing a pending unk first; so does this
                for (const char b : character) add(byte_tokens[static_cast<unsigned char>(b)]);
                continue;
            }
        }
        if (!unk) continue;  // no unk_token: the character is dropped, as tokenizers drops it
        if (pending_unk != no_unk && !fuse_unk) add(pending_unk);
        pending_unk = *unk;
    }
    if (pending_unk != no_unk) add(pending_unk);

    struct Candidate {
        std::int32_t rank, position, merged;
        bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : position > o.position; }  // min-heap
    };
    std::priority_queue<Candidate> queue;
    auto push = [&](std::int32_t position) {
        const std::int32_t next = symbols[position].next;
        if (next < 0) return;
        if (const Merge* m = find_merge(symbols[position].id, symbols[next].id)) queue.push({m->rank, position, m->merged});
    };
    for (std::int32_t p = 0; p + 1 < static_cast<std::int32_t>(symbols.size()); ++p) push(p);
    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& s = symbols[top.position];
        if (s.gone || s.next < 0) continue;
        Symbol& right = symbols[s.next];
        const Merge* m = find_merge(s.id, right.id);
        if (!m || m->merged != top.merged) continue;  // stale: the pair here changed since it was pushed
        s.id = top.merged;
        right.gone = true;
        s.next = right.next;
        if (s.next >= 0) symbols[s.next].prev = top.position;
        if (s.prev >= 0) push(s.prev);
        push(top.position);
    }
    for (const Symbol& s : symbols)
        if (!s.gone) out.push_back(s.id);
}

}  // namespace remat::text::detail
