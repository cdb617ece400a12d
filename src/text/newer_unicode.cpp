#include "src/text/newer_unicode.hpp"

#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace remat::text::detail {

namespace {

// PCRE2's Unicode version as ICU writes versions ("14.0.0" → {14, 0, 0, 0}).
using Version = std::array<std::uint8_t, U_MAX_VERSION_LENGTH>;

Version pcre2_unicode() {
    char text[64] = {};
    pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, text);
    unsigned major = 0, minor = 0, micro = 0;
    std::sscanf(text, "%u.%u.%u", &major, &minor, &micro);
    return {static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor), static_cast<std::uint8_t>(micro), 0};
}

Version icu_unicode() {
    UVersionInfo v;
    u_getUnicodeVersion(v);
    return {v[0], v[1], v[2], v[3]};
}

struct Addition {
    UChar32 first, last;
    const char* category;
    std::uint8_t major, minor;
};
constexpr Addition unicode_additions[] = {
#include "src/text/unicode_additions.inc"
};

// Two-letter category ("Lu") → the class items of its characters newer than PCRE2's tables.
const std::map<std::string, std::string>& newer_by_category() {
    static const std::map<std::string, std::string> table = [] {
        const Version known = pcre2_unicode();
        std::map<std::string, std::vector<std::pair<UChar32, UChar32>>> ranges;
        auto add = [&](const char* category, UChar32 first, UChar32 last) {
            auto& list = ranges[category];
            if (!list.empty() && list.back().second == first - 1)
                list.back().second = last;
            else
                list.emplace_back(first, last);
        };
        for (UChar32 c = 0; c <= 0x10FFFF; ++c) {
            const auto type = static_cast<UCharCategory>(u_charType(c));
            // The C categories stay PCRE2's: what it does not know is Cn there.
            if (type == U_UNASSIGNED || type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_PRIVATE_USE_CHAR ||
                type == U_SURROGATE)
                continue;
            UVersionInfo age;
            u_charAge(c, age);
            if (known < Version{age[0], age[1], age[2], age[3]}) add(u_getPropertyValueName(UCHAR_GENERAL_CATEGORY, type, U_SHORT_PROPERTY_NAME), c, c);
        }
        // What ICU does not know yet, from the generated table.
        const Version icu = icu_unicode();
        for (const Addition& a : unicode_additions)
            if (const Version age = {a.major, a.minor, 0, 0}; known < age && icu < age) add(a.category, a.first, a.last);
        std::map<std::string, std::string> items;
        for (auto& [category, list] : ranges) {
            std::sort(list.begin(), list.end());
            std::string& text = items[category];
            char buffer[32];
            for (const auto& [first, last] : list) {
                std::snprintf(buffer, sizeof buffer, first == last ? "\\x{%X}" : "\\x{%X}-\\x{%X}", first, last);
                text += buffer;
            }
        }
        return items;
    }();
    return table;
}

// A category name as Oniguruma compares them: case, spaces, '_' and '-' ignored.
std::string loose(std::string_view name) {
    std::string out;
    for (const char c : name)
        if (c != ' ' && c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Every general category name (short and long, loosely spelled) but the C ones → PCRE2's name for it and
// its two-letter parts.
struct Named {
    std::string pcre2_name;
    std::vector<std::string> parts;
};
const std::map<std::string, Named>& categories() {
    static const std::map<std::string, Named> table = [] {
        std::map<std::string, Named> t;
        for (int type = 0; type < U_CHAR_CATEGORY_COUNT; ++type) {
            const char* short_name = u_getPropertyValueName(UCHAR_GENERAL_CATEGORY, type, U_SHORT_PROPERTY_NAME);
            const char* long_name = u_getPropertyValueName(UCHAR_GENERAL_CATEGORY, type, U_LONG_PROPERTY_NAME);
            if (!short_name || short_name[0] == 'C') continue;
            t[loose(short_name)] = {short_name, {short_name}};
            if (long_name) t[loose(long_name)] = {short_name, {short_name}};
        }
        const std::vector<std::tuple<std::vector<std::string>, std::string, std::vector<std::string>>> groups = {
            {{"l", "letter"}, "L", {"Lu", "Ll", "Lt", "Lm", "Lo"}},
            {{"l&", "lc", "casedletter"}, "L&", {"Lu", "Ll", "Lt"}},
            {{"m", "mark", "combiningmark"}, "M", {"Mn", "Mc", "Me"}},
            {{"n", "number"}, "N", {"Nd", "Nl", "No"}},
            {{"p", "punctuation"}, "P", {"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}},
            {{"s", "symbol"}, "S", {"Sm", "Sc", "Sk", "So"}},
            {{"z", "separator"}, "Z", {"Zs", "Zl", "Zp"}},
        };
        for (const auto& [names, pcre2_name, parts] : groups)
            for (const std::string& name : names) t[name] = {pcre2_name, parts};
        return t;
    }();
    return table;
}

}  // namespace

std::optional<GeneralCategory> general_category(std::string_view name) {
    const auto found = categories().find(loose(name));
    if (found == categories().end()) return std::nullopt;
    GeneralCategory category{found->second.pcre2_name, ""};
    for (const std::string& part : found->second.parts)
        if (auto it = newer_by_category().find(part); it != newer_by_category().end()) category.newer += it->second;
    return category;
}

std::string regex_unicode_version() {
    Version newest = std::max(pcre2_unicode(), icu_unicode());
    for (const Addition& a : unicode_additions) newest = std::max(newest, Version{a.major, a.minor, 0, 0});
    return std::to_string(newest[0]) + "." + std::to_string(newest[1]);
}

}  // namespace remat::text::detail
