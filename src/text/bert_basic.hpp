#pragma once
// HF's BasicTokenizer (transformers' tokenization_bert.py), the Unicode half of BertTokenizer (private
// to src/text): text -> the words WordPiece then cuts. Unicode data comes from ICU.
#include <string>
#include <string_view>
#include <vector>

namespace remat::text::detail {

struct BasicOptions {
    bool lower = true;          // do_lower_case
    bool strip_accents = true;  // resolved: strip_accents, or do_lower_case when that is None
    bool chinese = true;        // tokenize_chinese_chars
};

// Appends the words of a text that holds no special token: PreTrainedTokenizer.tokenize's
// lowercasing (one code point at a time), then BasicTokenizer.tokenize. `text` must be valid UTF-8;
// words in never_split are kept as they are after the per-code-point lowercasing.
void basic_tokenize(std::string_view text, const BasicOptions& options, const std::vector<std::string>& never_split,
                    std::vector<std::string>& words);

// Python's str.isspace for one code point (bidi class WS, B or S, or category Zs): what str.split()
// splits at.
bool is_python_space(char32_t c);

}  // namespace remat::text::detail
