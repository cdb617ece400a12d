#include "models/bert/config.hpp"

#include "models/common/config_schema.hpp"

namespace remat::bert {

using namespace config_json;

const Schema<Config>& Config::schema() {
    static const Schema<Config> s =
        Schema<Config>("BERT config", "bert", "BertForMaskedLM")
            .size("vocab_size", &Config::vocab_size, Rule::positive).required()
            .size("hidden_size", &Config::hidden_size, Rule::positive).required()
            .size("num_hidden_layers", &Config::num_hidden_layers).required()
            .size("num_attention_heads", &Config::num_attention_heads, Rule::positive).required()
            .size("intermediate_size", &Config::intermediate_size, Rule::positive).required()
            .size("max_position_embeddings", &Config::max_position_embeddings, Rule::positive)
            .size("type_vocab_size", &Config::type_vocab_size, Rule::positive)
            .size("pad_token_id", &Config::pad_token_id).nullable()
            .real("hidden_dropout_prob", &Config::hidden_dropout_prob, Rule::probability)
            .real("attention_probs_dropout_prob", &Config::attention_probs_dropout_prob, Rule::probability)
            .real("layer_norm_eps", &Config::layer_norm_eps, Rule::positive)
            .real("initializer_range", &Config::initializer_range)
            .activation("hidden_act", &Config::hidden_act)
            .only("position_embedding_type", "absolute")
            .check([](const Config& c, const std::string& what) {
                if (c.hidden_size % c.num_attention_heads != 0)
                    throw ValueError(what + ": hidden_size = " + std::to_string(c.hidden_size) +
                                     " is not divisible by num_attention_heads = " +
                                     std::to_string(c.num_attention_heads));
            });
    return s;
}

}  // namespace remat::bert

template struct remat::models::ConfigFile<remat::bert::Config>;
