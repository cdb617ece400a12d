#pragma once
// LlamaForCausalLM's facts for the architecture table (models/architecture_of.hpp, docs/models.md).
// Qwen2 and Mistral (models/qwen2, models/mistral) are built from the same structs.
#include <array>
#include <string>
#include <vector>

#include "models/architecture.hpp"
#include "models/llama/llama.hpp"
#include "models/pretrained.hpp"

namespace remat::llama {

// The table's model for any architecture of the family, checkpointed by `policy`: compiled once, in
// llama/architecture.cpp, for all of them (they build one model type).
std::unique_ptr<models::Model> make_model(const Settings& settings, Generator& init,
                                          std::shared_ptr<Generator> dropout_rng, const Policy& policy);

// The facts the family's entries share; each architecture's own struct adds its names and Config.
template <class C>
struct FamilyFacts {
    using Config = C;
    static std::vector<std::string> also_loads() { return {}; }
    static constexpr auto objective = models::Objective::causal_lm;
    // Raw bytes for a folder without tokenizer files (remat init's); HF's tokenizer.json is refused by
    // component until remat reads the family's (text/tokenizer_files.cpp).
    static constexpr auto tokenizer = models::TokenizerKind::bpe;
    static std::vector<std::string> lora_targets() { return {"q_proj", "v_proj"}; }  // PEFT's default for the family

    // What init's --n-layer, --n-embd, --n-head, --vocab-size, --n-positions set.
    static constexpr std::array<const char*, 5> size_fields = {"num_hidden_layers", "hidden_size", "num_attention_heads",
                                                               "vocab_size", "max_position_embeddings"};
    static constexpr std::array<std::size_t C::*, 5> size_members = {
        &C::num_hidden_layers, &C::hidden_size, &C::num_attention_heads, &C::vocab_size, &C::max_position_embeddings};

    static Model create(const C& c, Generator& init, std::shared_ptr<Generator> dropout_rng) {
        c.validate();
        return llama::create(c.settings(), init, std::move(dropout_rng));
    }
    static std::unique_ptr<models::Model> make_model(const C& c, Generator& init, std::shared_ptr<Generator> dropout_rng,
                                                     const Policy& policy) {
        c.validate();
        return llama::make_model(c.settings(), init, std::move(dropout_rng), policy);
    }
    // --n-head alone gives as many KV heads (HF's null), whatever the architecture's default.
    static void resized(C& c, const models::SizeRequest& request) {
        if (request.n_head) c.num_key_value_heads = 0;
    }
    static std::size_t parameter_count(const C& c) { return llama::parameter_count(c.settings()); }
    static models::Summary summary(const C& c) {
        return {{c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.vocab_size, c.max_position_embeddings},
                0,
                c.attention_dropout};
    }
    // input_ids, attention_mask and position_ids (packed sequences).
    template <class M>
    static Var logits(M& model, const data::Batch& in) {
        const IdTensor absent;  // the model's "not given"
        const IdTensor* mask = in.find_id("attention_mask");
        const IdTensor* positions = in.find_id("position_ids");
        return model(in.id("input_ids"), mask ? *mask : absent, positions ? *positions : absent);
    }
};

struct ForCausalLM : FamilyFacts<Config> {
    static constexpr const char* model_type = "llama";
    static constexpr const char* hf_class = "LlamaForCausalLM";
    static constexpr const char* family = "Llama";
};

// The table's line (models/architectures.cpp): models::architecture_of<ForCausalLM>(), compiled in architecture.cpp.
models::Architecture causal_lm_entry();

}  // namespace remat::llama
