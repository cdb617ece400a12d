#include "src/text/hf_json.hpp"

#include "remat/core/in_quotes.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text::detail {

using json = nlohmann::json;

std::string type_of(const json& component, const std::string& where) {
    if (!component.is_object() || !component.contains("type") || !component["type"].is_string())
        fail(where, "expected an object with a \"type\", got " + excerpt(component));
    return component["type"].get<std::string>();
}

std::string string_field(const json& object, const char* key, const std::string& where) {
    if (!object.contains(key) || !object[key].is_string()) fail(where, std::string("\"") + key + "\" must be a string, got " +
                                                                        (object.contains(key) ? excerpt(object[key]) : std::string("nothing")));
    return object[key].get<std::string>();
}

std::string string_field(const json& object, const char* key, const std::string& fallback, const std::string& where) {
    if (!object.contains(key) || object[key].is_null()) return fallback;
    return string_field(object, key, where);
}

bool bool_field(const json& object, const char* key, bool fallback, const std::string& where) {
    if (!object.contains(key) || object[key].is_null()) return fallback;
    if (!object[key].is_boolean()) fail(where, std::string("\"") + key + "\" must be true or false, got " + excerpt(object[key]));
    return object[key].get<bool>();
}

std::size_t count_field(const json& object, const char* key, const std::string& where) {
    if (!object.contains(key) || !object[key].is_number_unsigned() || object[key].get<std::uint64_t>() > 1'000'000)
        fail(where, std::string("\"") + key + "\" must be a count, got " + (object.contains(key) ? excerpt(object[key]) : std::string("nothing")));
    return object[key].get<std::size_t>();
}

Regex pattern_field(const json& object, const std::string& where) {
    const std::string here = where + ".pattern";
    if (!object.contains("pattern") || !object["pattern"].is_object() || object["pattern"].size() != 1)
        fail(here, "expected {\"String\": ...} or {\"Regex\": ...}, got " + (object.contains("pattern") ? excerpt(object["pattern"]) : std::string("nothing")));
    const json& p = object["pattern"];
    if (p.contains("String") && p["String"].is_string()) {
        const std::string& s = p["String"].get_ref<const std::string&>();
        if (s.empty() || !is_utf8(s)) fail(here, "the string to match is empty or not UTF-8");
        return Regex::literal(s, here);
    }
    if (p.contains("Regex") && p["Regex"].is_string()) return Regex::from_oniguruma(p["Regex"].get_ref<const std::string&>(), here);
    fail(here, "expected {\"String\": ...} or {\"Regex\": ...}, got " + excerpt(p));
}

std::string character_field(const json& object, const char* key, const std::string& fallback, const std::string& where) {
    const std::string s = string_field(object, key, fallback, where);
    const auto lead = s.empty() ? 0 : static_cast<unsigned char>(s[0]);
    const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (s.empty() || s.size() != length || !is_utf8(s)) fail(where, std::string("\"") + key + "\" must be one character, got " + in_quotes(s));
    return s;
}

const json& list_field(const json& object, const char* key, const std::string& where) {
    if (!object.contains(key) || !object[key].is_array()) fail(where, std::string("\"") + key + "\" must be a list");
    return object[key];
}

}  // namespace remat::text::detail
