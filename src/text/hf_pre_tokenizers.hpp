#pragma once
// tokenizer.json's pre-tokenizers remat reads (private to src/text): Split, ByteLevel, Metaspace and a
// Sequence of them. Each cuts the pieces that are not added tokens into smaller ones, as tokenizers'
// PreTokenizedString does; empty pieces vanish.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "src/text/regex.hpp"

namespace remat::text::detail {

// A part of the text on its way to the model.
struct Piece {
    std::string text;
    bool at_start = false;        // begins where the whole text begins (Metaspace's prepend_scheme "first")
    std::int32_t added_id = -1;   // an added token's id: normalizers, pre-tokenizers and the model leave it alone
};

// What becomes of the delimiters (the matches) when a piece is cut (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

struct Split {
    Regex pattern;
    SplitBehavior behavior;
    bool invert;  // the matches are the pieces to keep, what lies between them the delimiters
};
struct ByteLevel {
    bool add_prefix_space;  // a piece that does not start with ' ' gets one
    bool use_regex;         // cut by GPT-2's pattern before mapping bytes to symbols
};
enum class PrependScheme { always, first, never };
struct Metaspace {
    std::string replacement;  // one character, "▁" in every known file
    PrependScheme prepend;
    bool split;  // cut before each replacement character
};
using PreTokenizer = std::variant<Split, ByteLevel, Metaspace>;

// The steps of tokenizer.json's "pre_tokenizer" (null: none). FormatError naming any other type.
std::vector<PreTokenizer> read_pre_tokenizers(const nlohmann::json& pre_tokenizer, const std::string& where);
// Metaspace's "prepend_scheme" ("always", "first", "never"), or the older "add_prefix_space".
PrependScheme read_prepend_scheme(const nlohmann::json& object, const std::string& where);

void pre_tokenize(const std::vector<PreTokenizer>& steps, std::vector<Piece>& pieces);

// Replaces every piece that is not an added token by what `cut(piece, out)` appends to `out`.
template <class Cut>
void each_piece(std::vector<Piece>& pieces, Cut cut) {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (Piece& p : pieces) {
        if (p.added_id >= 0)
            out.push_back(std::move(p));
        else
            cut(p, out);
    }
    pieces = std::move(out);
}

// The pieces of `piece` cut at `matches` (sorted [begin, end) byte ranges tiling nothing in particular),
// as tokenizers' NormalizedString::split with `behavior` does; empty pieces are left out.
void split_piece(const Piece& piece, const std::vector<std::pair<std::size_t, std::size_t>>& matches, SplitBehavior behavior, bool invert,
                 std::vector<Piece>& out);

}  // namespace remat::text::detail
