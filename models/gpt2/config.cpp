#include "models/gpt2/config.hpp"
#include <algorithm>

#include "models/common/config_json.hpp"

namespace remat::gpt2 {

namespace {
using namespace config_json;

Activation parse_activation(const std::string& name, const std::string& source) {
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::gelu_new;
    if (name == "gelu") return Activation::gelu;
    if (name == "relu") return Activation::relu;
    if (name == "tanh") return Activation::tanh;
    throw ValueError(source + ": unsupported activation_function \"" + name + "\" (gelu_new, gelu, relu or tanh)");
}

const char* activation_name(Activation a) {
    switch (a) {
        case Activation::gelu_new: return "gelu_new";
        case Activation::gelu: return "gelu";
        case Activation::relu: return "relu";
        case Activation::tanh: return "tanh";
    }
    return "gelu_new";
}
}  // namespace

void Config::validate() const {
    auto positive = [](std::size_t v, const char* name) {
        if (v == 0) throw ValueError(std::string("GPT-2 config: ") + name + " must be positive");
    };
    positive(vocab_size, "vocab_size");
    positive(n_positions, "n_positions");
    positive(n_embd, "n_embd");
    positive(n_head, "n_head");
    if (n_embd % n_head != 0)
        throw ValueError("GPT-2 config: n_embd = " + std::to_string(n_embd) + " is not divisible by n_head = " +
                         std::to_string(n_head));
    for (auto [p, name] : {std::pair{resid_pdrop, "resid_pdrop"}, {embd_pdrop, "embd_pdrop"}, {attn_pdrop, "attn_pdrop"}})
        if (!(p >= 0.0f && p <= 1.0f)) throw ValueError(std::string("GPT-2 config: ") + name + " must be in [0, 1]");
    if (!(layer_norm_epsilon > 0.0f)) throw ValueError("GPT-2 config: layer_norm_epsilon must be positive");
}

Config Config::from_json(const std::string& text, const std::string& source) {
    const json j = parse_object(text, source);
    Config c;
    require(j, {"vocab_size", "n_embd", "n_layer", "n_head"}, source);
    c.vocab_size = size_field(j, "vocab_size", source);
    c.n_embd = size_field(j, "n_embd", source);
    c.n_layer = size_field(j, "n_layer", source);
    c.n_head = size_field(j, "n_head", source);
    if (j.contains("n_positions"))
        c.n_positions = size_field(j, "n_positions", source);
    else if (j.contains("n_ctx"))
        c.n_positions = size_field(j, "n_ctx", source);
    else
        throw ValueError(source + ": missing field n_positions (or n_ctx)");
    if (j.contains("n_inner") && !j["n_inner"].is_null()) c.n_inner = size_field(j, "n_inner", source);
    c.layer_norm_epsilon = float_field(j, "layer_norm_epsilon", c.layer_norm_epsilon, source);
    c.resid_pdrop = float_field(j, "resid_pdrop", c.resid_pdrop, source);
    c.embd_pdrop = float_field(j, "embd_pdrop", c.embd_pdrop, source);
    c.attn_pdrop = float_field(j, "attn_pdrop", c.attn_pdrop, source);
    c.initializer_range = float_field(j, "initializer_range", c.initializer_range, source);
    if (j.contains("activation_function")) {
        if (!j["activation_function"].is_string())
            throw ValueError(source + ": activation_function must be a string");
        c.activation_function = parse_activation(j["activation_function"].get<std::string>(), source);
    }
    try {
        c.validate();
    } catch (const ValueError& e) {
        throw ValueError(source + ": " + e.message());
    }
    return c;
}

Config Config::from_file(const std::filesystem::path& path) { return from_json(read_file(path), path.string()); }

std::string Config::to_json() const {
    json j = {{"model_type", "gpt2"},
              {"architectures", {"GPT2LMHeadModel"}},
              {"vocab_size", vocab_size},
              {"n_positions", n_positions},
              {"n_ctx", n_positions},
              {"n_embd", n_embd},
              {"n_layer", n_layer},
              {"n_head", n_head},
              {"n_inner", n_inner ? json(n_inner) : json(nullptr)},
              {"layer_norm_epsilon", layer_norm_epsilon},
              {"activation_function", activation_name(activation_function)},
              {"resid_pdrop", resid_pdrop},
              {"embd_pdrop", embd_pdrop},
              {"attn_pdrop", attn_pdrop},
              {"initializer_range", initializer_range},
              // HF's <|endoftext|> is id 50256; a smaller (byte-level) vocabulary ends at vocab_size - 1.
              {"bos_token_id", std::min<std::size_t>(50256, vocab_size - 1)},
              {"eos_token_id", std::min<std::size_t>(50256, vocab_size - 1)}};
    return j.dump(2) + "\n";
}

}  // namespace remat::gpt2
