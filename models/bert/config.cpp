#include "models/bert/config.hpp"

#include "models/common/config_json.hpp"

namespace remat::bert {

namespace {
using namespace config_json;

Activation parse_activation(const std::string& name, const std::string& source) {
    if (name == "gelu") return Activation::gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_new;
    if (name == "relu") return Activation::relu;
    if (name == "tanh") return Activation::tanh;
    throw ValueError(source + ": unsupported hidden_act \"" + name + "\" (gelu, gelu_new, relu or tanh)");
}

const char* activation_name(Activation a) {
    switch (a) {
        case Activation::gelu: return "gelu";
        case Activation::gelu_new: return "gelu_new";
        case Activation::relu: return "relu";
        case Activation::tanh: return "tanh";
    }
    return "gelu";
}
}  // namespace

void Config::validate() const {
    auto positive = [](std::size_t v, const char* name) {
        if (v == 0) throw ValueError(std::string("BERT config: ") + name + " must be positive");
    };
    positive(vocab_size, "vocab_size");
    positive(hidden_size, "hidden_size");
    positive(num_attention_heads, "num_attention_heads");
    positive(intermediate_size, "intermediate_size");
    positive(max_position_embeddings, "max_position_embeddings");
    positive(type_vocab_size, "type_vocab_size");
    if (hidden_size % num_attention_heads != 0)
        throw ValueError("BERT config: hidden_size = " + std::to_string(hidden_size) +
                         " is not divisible by num_attention_heads = " + std::to_string(num_attention_heads));
    for (auto [p, name] : {std::pair{hidden_dropout_prob, "hidden_dropout_prob"},
                           {attention_probs_dropout_prob, "attention_probs_dropout_prob"}})
        if (!(p >= 0.0f && p <= 1.0f)) throw ValueError(std::string("BERT config: ") + name + " must be in [0, 1]");
    if (!(layer_norm_eps > 0.0f)) throw ValueError("BERT config: layer_norm_eps must be positive");
}

Config Config::from_json(const std::string& text, const std::string& source) {
    const json j = parse_object(text, source);
    require(j, {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"}, source);
    Config c;
    c.vocab_size = size_field(j, "vocab_size", source);
    c.hidden_size = size_field(j, "hidden_size", source);
    c.num_hidden_layers = size_field(j, "num_hidden_layers", source);
    c.num_attention_heads = size_field(j, "num_attention_heads", source);
    c.intermediate_size = size_field(j, "intermediate_size", source);
    if (j.contains("max_position_embeddings")) c.max_position_embeddings = size_field(j, "max_position_embeddings", source);
    if (j.contains("type_vocab_size")) c.type_vocab_size = size_field(j, "type_vocab_size", source);
    if (j.contains("pad_token_id") && !j["pad_token_id"].is_null()) c.pad_token_id = size_field(j, "pad_token_id", source);
    c.hidden_dropout_prob = float_field(j, "hidden_dropout_prob", c.hidden_dropout_prob, source);
    c.attention_probs_dropout_prob = float_field(j, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, source);
    c.layer_norm_eps = float_field(j, "layer_norm_eps", c.layer_norm_eps, source);
    c.initializer_range = float_field(j, "initializer_range", c.initializer_range, source);
    if (j.contains("hidden_act")) {
        if (!j["hidden_act"].is_string()) throw ValueError(source + ": hidden_act must be a string");
        c.hidden_act = parse_activation(j["hidden_act"].get<std::string>(), source);
    }
    if (j.contains("position_embedding_type") && j["position_embedding_type"] != "absolute")
        throw ValueError(source + ": unsupported position_embedding_type " + shown(j["position_embedding_type"]) +
                         " (only \"absolute\")");
    try {
        c.validate();
    } catch (const ValueError& e) {
        throw ValueError(source + ": " + e.message());
    }
    return c;
}

Config Config::from_file(const std::filesystem::path& path) { return from_json(read_file(path), path.string()); }

std::string Config::to_json() const {
    json j = {{"model_type", "bert"},
              {"architectures", {"BertForMaskedLM"}},
              {"vocab_size", vocab_size},
              {"hidden_size", hidden_size},
              {"num_hidden_layers", num_hidden_layers},
              {"num_attention_heads", num_attention_heads},
              {"intermediate_size", intermediate_size},
              {"hidden_act", activation_name(hidden_act)},
              {"hidden_dropout_prob", hidden_dropout_prob},
              {"attention_probs_dropout_prob", attention_probs_dropout_prob},
              {"max_position_embeddings", max_position_embeddings},
              {"type_vocab_size", type_vocab_size},
              {"layer_norm_eps", layer_norm_eps},
              {"initializer_range", initializer_range},
              {"pad_token_id", pad_token_id},
              {"position_embedding_type", "absolute"}};
    return j.dump(2) + "\n";
}

}  // namespace remat::bert
