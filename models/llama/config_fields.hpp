#pragma once
// The config.json fields of llama::Fields, declared once for every architecture of the family
// (models/llama, models/qwen2, models/mistral each add their own to these). Private to models/.
#include <string>

#include "models/common/config_schema.hpp"
#include "models/llama/config.hpp"

namespace remat::llama {

// rope_scaling: null, or {"rope_type" (older files: "type"): "default" | "linear" | "llama3", …}.
nn::RopeScaling read_rope_scaling(const config_json::json& v, const std::string& key, const std::string& source);
config_json::json write_rope_scaling(const nn::RopeScaling& s);
// The rules across fields: heads dividing the hidden size, KV heads dividing the heads, an even
// head size. Throws ValueError "<what>: …".
void check_fields(const Fields& f, const std::string& what);

template <class C>
config_json::Schema<C>& declare_fields(config_json::Schema<C>& s) {
    using config_json::Rule;
    return s.size("vocab_size", &C::vocab_size, Rule::positive).required()
        .size("hidden_size", &C::hidden_size, Rule::positive).required()
        .size("intermediate_size", &C::intermediate_size, Rule::positive).required()
        .size("num_hidden_layers", &C::num_hidden_layers).required()
        .size("num_attention_heads", &C::num_attention_heads, Rule::positive).required()
        .size("num_key_value_heads", &C::num_key_value_heads, Rule::positive_or_null)
            .written([](const C& c) { return config_json::json(c.kv_heads()); })
        .size("head_dim", &C::head_dim, Rule::positive_or_null)  // null (or absent): hidden_size / num_attention_heads
            .written([](const C& c) { return config_json::json(c.head_size()); })
        .size("max_position_embeddings", &C::max_position_embeddings, Rule::positive)
        .activation("hidden_act", &C::hidden_act)
        .real("rms_norm_eps", &C::rms_norm_eps, Rule::positive)
        .real("rope_theta", &C::rope_theta, Rule::positive)
        .custom("rope_scaling",
                [](C& c, const config_json::json& v, const std::string& key, const std::string& source) {
                    c.rope_scaling = read_rope_scaling(v, key, source);
                },
                [](const C& c) { return write_rope_scaling(c.rope_scaling); })
        .real("initializer_range", &C::initializer_range)
        .real("attention_dropout", &C::attention_dropout, Rule::probability)
        .flag("tie_word_embeddings", &C::tie_word_embeddings)
        .check([](const C& c, const std::string& what) { check_fields(c, what); });
}

}  // namespace remat::llama
