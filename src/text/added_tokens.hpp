#pragma once
// Cutting added (special) tokens out of a text before the rest is tokenised (private to src/text).
#include <string_view>
#include <vector>

#include "src/text/bpe.hpp"

namespace remat::text::detail {

// Calls plain(segment) for the text between added tokens and token(id) for each added token, in order.
// The earliest occurrence of any added token wins, the longest at that position: HF's Trie.split and
// tokenizers' leftmost-longest matching agree on this.
template <class Plain, class Token>
void split_added(std::string_view text, const std::vector<AddedToken>& added, Plain plain, Token token) {
    constexpr auto never = std::string_view::npos;
    std::vector<std::size_t> at(added.size(), 0);  // next occurrence of each at or after `from`, or never
    for (std::size_t k = 0; k < added.size(); ++k) at[k] = text.find(added[k].content);
    std::size_t from = 0;
    while (true) {
        std::size_t best = never, best_k = 0;
        for (std::size_t k = 0; k < added.size(); ++k) {
            if (at[k] != never && at[k] < from) at[k] = text.find(added[k].content, from);  // overlapped by the last match
            if (at[k] < best || (at[k] == best && at[k] != never && added[k].content.size() > added[best_k].content.size()))
                best = at[k], best_k = k;
        }
        if (best == never) break;
        if (best > from) plain(text.substr(from, best - from));
        token(added[best_k].id);
        from = best + added[best_k].content.size();
    }
    if (from < text.size()) plain(text.substr(from));
}

}  // namespace remat::text::detail
