#pragma once
// Cutting added (special) tokens out of a text before the rest is tokenised (private to src/text).
#include <string_view>
#include <vector>

#include "src/text/bpe.hpp"

namespace remat::text::detail {

struct AddedMatch {
    std::size_t begin, end;  // bytes of the text
    std::size_t index;       // into the token list
};

// The occurrences of the tokens' contents, leftmost first, the longest at a position, none overlapping
// another: HF's Trie.split and tokenizers' leftmost-longest Aho-Corasick agree on this.
template <class Tokens, class Content>
std::vector<AddedMatch> find_added(std::string_view text, const Tokens& tokens, Content content_of) {
    constexpr auto never = std::string_view::npos;
    std::vector<AddedMatch> matches;
    std::vector<std::size_t> at(tokens.size(), 0);  // next occurrence of each at or after `from`, or never
    for (std::size_t k = 0; k < tokens.size(); ++k) at[k] = text.find(content_of(tokens[k]));
    std::size_t from = 0;
    while (true) {
        std::size_t best = never, best_k = 0;
        for (std::size_t k = 0; k < tokens.size(); ++k) {
            const std::string_view content = content_of(tokens[k]);
            if (at[k] != never && at[k] < from) at[k] = text.find(content, from);  // overlapped by the last match
            if (at[k] < best || (at[k] == best && at[k] != never && content.size() > content_of(tokens[best_k]).size()))
                best = at[k], best_k = k;
        }
        if (best == never) break;
        const std::size_t end = best + content_of(tokens[best_k]).size();
        matches.push_back({best, end, best_k});
        from = end;
    }
    return matches;
}

// Calls plain(segment) for the text between added tokens and token(id) for each added token, in order.
template <class Plain, class Token>
void split_added(std::string_view text, const std::vector<AddedToken>& added, Plain plain, Token token) {
    std::size_t from = 0;
    for (const AddedMatch& m : find_added(text, added, [](const AddedToken& a) -> std::string_view { return a.content; })) {
        if (m.begin > from) plain(text.substr(from, m.begin - from));
        token(added[m.index].id);
        from = m.end;
    }
    if (from < text.size()) plain(text.substr(from));
}

}  // namespace remat::text::detail
