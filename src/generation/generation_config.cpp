#include "remat/generation/generation_config.hpp"

#include <nlohmann/json.hpp>

#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"
#include "remat/generation/sampling.hpp"
#include "src/core/strict_json.hpp"

namespace remat::generation {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json read_object(const fs::path& file) {
    const json j = strict_json::parse<json>(read_file(file, std::size_t{16} << 20, "a config file"), file.string());
    if (!j.is_object()) throw FormatError(file.string() + ": expected a JSON object");
    return j;
}

[[noreturn]] void wrong(const fs::path& file, const char* key, const char* expected, const json& v) {
    throw FormatError(file.string() + ": " + key + " must be " + expected + ", got " + v.dump(-1, ' ', false, json::error_handler_t::replace));
}

// A field when present and not null.
const json* field(const json& j, const char* key) { return j.contains(key) && !j[key].is_null() ? &j[key] : nullptr; }

std::optional<double> number(const json& j, const char* key, const fs::path& file) {
    const json* v = field(j, key);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong(file, key, "a number", *v);
    return v->get<double>();
}

std::optional<std::int64_t> count(const json& j, const char* key, const fs::path& file) {
    const json* v = field(j, key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0) wrong(file, key, "a whole number ≥ 0", *v);
    return v->get<std::int64_t>();
}

// eos_token_id: a number or a list of numbers.
std::optional<std::vector<std::int64_t>> token_ids(const json& j, const char* key, const fs::path& file) {
    const json* v = field(j, key);
    if (!v) return std::nullopt;
    std::vector<std::int64_t> ids;
    for (const json& id : v->is_array() ? *v : json::array({*v})) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0) wrong(file, key, "a token id or a list of them", *v);
        ids.push_back(id.get<std::int64_t>());
    }
    return ids;
}

}  // namespace

FolderSettings read_folder_settings(const fs::path& dir) {
    FolderSettings s;
    Options& o = s.options;
    std::optional<std::int64_t> pad;
    const fs::path config = dir / "config.json", generation = dir / "generation_config.json";
    std::error_code ec;
    if (fs::exists(config, ec)) {
        const json c = read_object(config);
        if (auto eos = token_ids(c, "eos_token_id", config)) o.stop_ids = *eos;
        pad = count(c, "pad_token_id", config);
    }
    if (fs::exists(generation, ec)) {
        s.has_file = true;
        const json g = read_object(generation);
        if (const json* v = field(g, "do_sample")) {
            if (!v->is_boolean()) wrong(generation, "do_sample", "true or false", *v);
            o.sampling.do_sample = v->get<bool>();
        }
        if (auto t = number(g, "temperature", generation)) o.sampling.temperature = *t;
        if (auto k = count(g, "top_k", generation)) o.sampling.top_k = static_cast<std::size_t>(*k);
        if (auto p = number(g, "top_p", generation)) o.sampling.top_p = *p;
        if (auto r = number(g, "repetition_penalty", generation)) o.sampling.repetition_penalty = *r;
        if (auto n = count(g, "max_new_tokens", generation)) {
            o.max_new_tokens = static_cast<std::size_t>(*n);
            s.max_new_tokens_given = true;
        }
        if (auto eos = token_ids(g, "eos_token_id", generation)) o.stop_ids = *eos;
        if (auto p = count(g, "pad_token_id", generation)) pad = p;
        if (s.max_new_tokens_given && o.max_new_tokens == 0) throw FormatError(generation.string() + ": max_new_tokens must be at least 1, got 0");
        try {
            check(o.sampling);
        } catch (const ValueError& e) {
            throw FormatError(generation.string() + ": " + e.message());
        }
    }
    o.pad_id = pad ? *pad : o.stop_ids.empty() ? 0 : o.stop_ids.front();
    return s;
}

}  // namespace remat::generation
