#include "models/gpt2/config.hpp"

#include <algorithm>

#include "models/common/config_schema.hpp"

namespace remat::gpt2 {

using namespace config_json;

const Schema<Config>& Config::schema() {
    static const Schema<Config> s =
        Schema<Config>("GPT-2 config", "gpt2", "GPT2LMHeadModel")
            .size("vocab_size", &Config::vocab_size, Rule::positive).required()
            .size("n_embd", &Config::n_embd, Rule::positive).required()
            .size("n_layer", &Config::n_layer).required()
            .size("n_head", &Config::n_head, Rule::positive).required()
            .size("n_positions", &Config::n_positions, Rule::positive).required().alias("n_ctx")
            .size("n_inner", &Config::n_inner).null_when_zero()
            .real("resid_pdrop", &Config::resid_pdrop, Rule::probability)
            .real("embd_pdrop", &Config::embd_pdrop, Rule::probability)
            .real("attn_pdrop", &Config::attn_pdrop, Rule::probability)
            .real("layer_norm_epsilon", &Config::layer_norm_epsilon, Rule::positive)
            .real("initializer_range", &Config::initializer_range)
            .activation("activation_function", &Config::activation_function)
            // HF's <|endoftext|> is id 50256; a smaller (byte-level) vocabulary ends at vocab_size - 1.
            .computed("bos_token_id", [](const Config& c) { return json(std::min<std::size_t>(50256, c.vocab_size - 1)); })
            .computed("eos_token_id", [](const Config& c) { return json(std::min<std::size_t>(50256, c.vocab_size - 1)); })
            .check([](const Config& c, const std::string& what) {
                if (c.n_embd % c.n_head != 0)
                    throw ValueError(what + ": n_embd = " + std::to_string(c.n_embd) + " is not divisible by n_head = " +
                                     std::to_string(c.n_head));
            });
    return s;
}

}  // namespace remat::gpt2

template struct remat::models::ConfigFile<remat::gpt2::Config>;
