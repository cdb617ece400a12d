#pragma once
// General categories newer than PCRE2's Unicode tables (private to src/text). Debian 12's PCRE2 (10.42)
// knows Unicode 14.0, its ICU (72) 15.0, HF's tokenizers (Oniguruma's tables) 16.0: to PCRE2 a letter
// added since 14.0 (Kawi, Nag Mundari, CJK extensions H and I, Kirat Rai…) is unassigned, so \p{L} in
// Llama 3's or Qwen's pre-tokenizer regex misses it and the text splits otherwise than in HF's tokenizers.
// Regex::from_oniguruma adds these characters to the classes: ICU's for what ICU knows, then
// src/text/unicode_additions.inc (Unicode 15.1 and 16.0) for what it does not.
#include <optional>
#include <string>
#include <string_view>

namespace remat::text::detail {

struct GeneralCategory {
    std::string pcre2_name;  // as PCRE2 spells it: "L", "Lu", "L&", …
    std::string newer;       // class items of its characters PCRE2 does not know: "\x{11F04}-\x{11F10}…", or ""
};

// A general category as a regex names it — "L", "Lu", "N", "Nd", "M", "P", "Pc", "S", "Z", "L&", or a long
// name ("Letter", "Uppercase_Letter", "Number"; case, spaces, '_' and '-' ignored, as Oniguruma does).
// Nothing for any other name, the C categories included (PCRE2 counts the characters it does not know
// as Cn; they stay there).
std::optional<GeneralCategory> general_category(std::string_view name);

// The Unicode version remat's regex classes follow, "16.0".
std::string regex_unicode_version();

}  // namespace remat::text::detail
