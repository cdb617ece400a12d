#include "models/llama/config.hpp"

#include "models/llama/config_fields.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::llama {

using namespace config_json;

namespace {
double number(const json& object, const char* field, const std::string& key, const std::string& source) {
    if (!object.contains(field)) throw ValueError(source + ": " + key + " needs " + field);
    const json& v = object[field];
    if (!v.is_number() || !(v.get<double>() > 0))
        throw ValueError(source + ": " + key + "." + field + " must be a positive number, got " + shown(v));
    return v.get<double>();
}
// 8192 rather than 8192.0, as HF's files have it.
json whole_or_real(double v) {
    if (v >= 0 && v < 9e15 && v == static_cast<double>(static_cast<std::uint64_t>(v))) return json(static_cast<std::uint64_t>(v));
    return json(v);
}
}  // namespace

nn::RopeScaling read_rope_scaling(const json& v, const std::string& key, const std::string& source) {
    if (!v.is_object()) throw ValueError(source + ": " + key + " must be an object or null, got " + shown(v));
    const char* type_field = v.contains("rope_type") ? "rope_type" : "type";  // older files say "type"
    if (!v.contains(type_field)) throw ValueError(source + ": " + key + " needs rope_type");
    const json& type = v[type_field];
    if (!type.is_string()) throw ValueError(source + ": " + key + "." + type_field + " must be a string, got " + shown(type));
    nn::RopeScaling s;
    const std::string name = type.get<std::string>();
    if (name == "default") return s;
    if (name == "linear") {
        s.type = nn::RopeScaling::Type::linear;
        s.factor = number(v, "factor", key, source);
        return s;
    }
    if (name == "llama3") {
        s.type = nn::RopeScaling::Type::llama3;
        s.factor = number(v, "factor", key, source);
        s.low_freq_factor = number(v, "low_freq_factor", key, source);
        s.high_freq_factor = number(v, "high_freq_factor", key, source);
        s.original_max_position_embeddings = number(v, "original_max_position_embeddings", key, source);
        if (!(s.high_freq_factor > s.low_freq_factor))
            throw ValueError(source + ": " + key + ".high_freq_factor must be larger than low_freq_factor");
        return s;
    }
    throw ValueError(source + ": unsupported " + key + " type " + in_quotes(name) +
                     " (remat implements \"default\", \"linear\" and \"llama3\")");
}

json write_rope_scaling(const nn::RopeScaling& s) {
    switch (s.type) {
        case nn::RopeScaling::Type::none: return nullptr;
        case nn::RopeScaling::Type::linear: return {{"rope_type", "linear"}, {"factor", s.factor}};
        case nn::RopeScaling::Type::llama3:
            return {{"rope_type", "llama3"},
                    {"factor", s.factor},
                    {"low_freq_factor", s.low_freq_factor},
                    {"high_freq_factor", s.high_freq_factor},
                    {"original_max_position_embeddings", whole_or_real(s.original_max_position_embeddings)}};
    }
    return nullptr;
}

void check_fields(const Fields& f, const std::string& what) {
    const std::string heads = std::to_string(f.num_attention_heads);
    if (!f.head_dim && f.hidden_size % f.num_attention_heads != 0)
        throw ValueError(what + ": hidden_size = " + std::to_string(f.hidden_size) +
                         " is not divisible by num_attention_heads = " + heads + " (or set head_dim)");
    if (f.head_size() % 2 != 0)
        throw ValueError(what + ": the head size " + std::to_string(f.head_size()) + " must be even (rotary embeddings)");
    if (f.num_attention_heads % f.kv_heads() != 0)
        throw ValueError(what + ": num_key_value_heads = " + std::to_string(f.kv_heads()) +
                         " does not divide num_attention_heads = " + heads);
}

const Schema<Config>& Config::schema() {
    static const Schema<Config> s = [] {
        Schema<Config> schema("Llama config", "llama", "LlamaForCausalLM");
        declare_fields(schema)
            .flag("attention_bias", &Config::attention_bias)
            .flag("mlp_bias", &Config::mlp_bias);
        return schema;
    }();
    return s;
}

}  // namespace remat::llama

template struct remat::models::ConfigFile<remat::llama::Config>;
