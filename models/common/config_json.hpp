#pragma once
// Reading HF config.json text with messages that name the file (private to models/); the fields
// themselves are read by config_schema.hpp.
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "remat/core/error.hpp"
#include "remat/core/files.hpp"
#include "src/core/strict_json.hpp"

namespace remat::config_json {

using json = nlohmann::json;

// A value for a message: scalars as written (long strings cut short), containers by kind only —
// dump() recurses, and a deeply nested value ("[[[[…") would overflow the stack.
// A number as a file would write it: "0", "-1", "1e-06", "10000.5".
inline std::string number_text(double x) {
    if (x == std::trunc(x) && std::abs(x) < 1e15) return std::to_string(static_cast<long long>(x));
    char text[32];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, x);
        if (std::strtod(text, nullptr) == x) break;
    }
    return text;
}

inline std::string shown(const json& v) {
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 80) {
        std::size_t cut = 77;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
        s = s.substr(0, cut) + "...";
    }
    return s;
}

// The parsed object (strict_json: no duplicate keys, nothing after it, nesting bounded), or
// ValueError "<source>: not valid JSON: …" / "duplicate key …" / "expected a JSON object".
inline json parse_object(const std::string& text, const std::string& source) {
    json j;
    try {
        j = strict_json::parse<json>(text, source);
    } catch (const FormatError& e) {
        throw ValueError(e.message());
    }
    if (!j.is_object()) throw ValueError(source + ": expected a JSON object");
    return j;
}

// HF's config.json files are a few kilobytes; this bounds a hostile one.
inline constexpr std::size_t max_config_bytes = std::size_t{16} << 20;

// The text of a config.json, by remat::read_file (FormatError "<path>: cannot read: …", "… over the
// 16777216-byte limit for a config file").
inline std::string read_file(const std::filesystem::path& path) { return remat::read_file(path, max_config_bytes, "a config file"); }

}  // namespace remat::config_json
