#pragma once
// Python's string case methods over the whole of Unicode (ICU's tables), as chat templates call them
// through jinja2: `upper`, `lower`, `capitalize`, `title` as filters and as str methods, and the
// isupper/islower/isalpha/isdigit/isspace tests. Full mappings as Python's: "straße" upper is
// "STRASSE", "ǆ" title is "ǅ", a final Σ lowers to ς. Bytes that are not UTF-8 are kept as they are.
#include <string>
#include <string_view>

namespace remat::text::jinja {

std::string unicode_upper(std::string_view s);       // str.upper()
std::string unicode_lower(std::string_view s);       // str.lower()
std::string unicode_capitalize(std::string_view s);  // str.capitalize() (3.8+: the first character title-cased)
std::string unicode_title(std::string_view s);       // str.title(): title case after a character that is not cased
std::string jinja_title(std::string_view s);         // jinja2's title filter: words begin after whitespace - ( { [ <

// str.isupper(), islower(), isalpha(), isdigit(), isspace(); `method` is one of those names.
bool unicode_is(std::string_view method, std::string_view s);

}  // namespace remat::text::jinja
