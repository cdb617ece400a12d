#include "src/text/bpe.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "remat/core/error.hpp"

namespace remat::text::detail {

void MergeTable::reserve(std::size_t n) {
    std::size_t capacity = 16;
    while (3 * capacity < 4 * n) capacity *= 2;
    if (capacity <= slots_.size()) return;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    size_ = 0;
    for (const Slot& s : old)
        if (s.key != empty) set(static_cast<std::int32_t>(s.key >> 32), static_cast<std::int32_t>(s.key & 0xFFFFFFFFu), s.merge);
}

void MergeTable::set(std::int32_t left, std::int32_t right, Merge merge) {
    if (4 * (size_ + 1) > 3 * slots_.size()) reserve(2 * (size_ + 1));
    const std::uint64_t key = pair_key(left, right);
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
        Slot& s = slots_[i];
        if (s.key == key) {
            s.merge = merge;
            return;
        }
        if (s.key == empty) {
            s = {key, merge};
            ++size_;
            return;
        }
    }
}

// HF's GPT2Tokenizer.bpe (encoder.py's Encoder.bpe) repeats: take the lowest-ranked pair in the word,
// merge *all* its occurrences left to right in one pass, recompute the pairs. Here, in O(n log n): a
// min-heap of (rank, position) holds every adjacent pair that has a merge, stale entries included and
// checked when popped. All entries of the lowest rank are taken out at once and merged in position
// order, so pairs created during that pass wait for the next one even when their rank is lower — as in
// the Python loop, and unlike a merge-as-soon-as-possible queue, which differs on merges lists where a
// merge uses the result of a later one (tests/fixtures/tokenizer/out-of-order). A pass never creates its
// own pair: "AB" differs from both "A" and "B".
void bpe_encode(const Gpt2Tables& tables, std::string_view piece, BpeWorkspace& work, std::vector<std::int64_t>& out) {
    if (piece.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw ValueError("encode: a single pre-tokenizer piece of " + std::to_string(piece.size()) + " bytes (2^31 or more) is not supported");
    const auto n = static_cast<std::int32_t>(piece.size());
    if (n <= 1) {
        if (n == 1) out.push_back(tables.byte_id[static_cast<unsigned char>(piece[0])]);
        return;
    }
    constexpr std::int32_t none = -1;
    auto& id = work.id;
    auto& next = work.next;
    auto& prev = work.prev;
    id.resize(n), next.resize(n), prev.resize(n);
    for (std::int32_t i = 0; i < n; ++i) {
        id[i] = tables.byte_id[static_cast<unsigned char>(piece[i])];
        prev[i] = i - 1;
        next[i] = i + 1 < n ? i + 1 : none;
    }

    using Candidate = BpeWorkspace::Candidate;
    auto later = [](const Candidate& a, const Candidate& b) { return a.rank != b.rank ? a.rank > b.rank : a.position > b.position; };
    auto& heap = work.heap;
    heap.clear();
    auto push = [&](std::int32_t position) {  // the pair starting at this symbol, if it has a merge
        if (const Merge* m = tables.find_merge(id[position], id[next[position]])) {
            heap.push_back({m->rank, position});
            std::push_heap(heap.begin(), heap.end(), later);
        }
    };
    for (std::int32_t i = 0; i + 1 < n; ++i)
        if (const Merge* m = tables.find_merge(id[i], id[i + 1])) heap.push_back({m->rank, i});
    std::make_heap(heap.begin(), heap.end(), later);

    auto& batch = work.batch;
    while (!heap.empty()) {
        const std::int32_t rank = heap.front().rank;
        batch.clear();
        while (!heap.empty() && heap.front().rank == rank) {  // pops in increasing position
            batch.push_back(heap.front().position);
            std::pop_heap(heap.begin(), heap.end(), later);
            heap.pop_back();
        }
        for (const std::int32_t p : batch) {
            const std::int32_t q = next[p];
            if (id[p] == none || q == none) continue;  // merged into its left neighbour, or now last
            const Merge* m = tables.find_merge(id[p], id[q]);
            if (!m || m->rank != rank) continue;  // the pair changed since it was pushed
            id[p] = m->merged;
            id[q] = none;
            next[p] = next[q];
            if (next[p] != none) prev[next[p]] = p;
            if (prev[p] != none) push(prev[p]);
            if (next[p] != none) push(p);
        }
    }
    for (std::int32_t i = 0; i != none; i = next[i]) out.push_back(id[i]);
}

}  // namespace remat::text::detail
