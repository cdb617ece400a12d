#pragma once
// Where a text may be cut without changing GPT-2's ids (private to src/text).
#include <string_view>
#include <vector>

#include "src/text/bpe.hpp"

namespace remat::text::detail {

// The last p just before an ASCII whitespace byte that follows a character that is not whitespace, where
// no added token's occurrence spans p; 0 when there is none. Holds for GPT-2's regex over raw text:
// safe_cut.cpp gives the reasoning.
std::size_t gpt2_last_safe_cut(std::string_view text, const std::vector<AddedToken>& added);

}  // namespace remat::text::detail
