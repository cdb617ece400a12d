#pragma once
// GPT2LMHeadModel's facts for the architecture table (models/architecture_of.hpp, docs/models.md).
#include <array>
#include <string>
#include <vector>

#include "models/architecture.hpp"
#include "models/pretrained.hpp"
#include "models/gpt2/gpt2.hpp"

namespace remat::gpt2 {

struct LMHead {
    using Config = gpt2::Config;
    static constexpr const char* model_type = "gpt2";
    static constexpr const char* hf_class = "GPT2LMHeadModel";
    static std::vector<std::string> also_loads() { return {"GPT2Model"}; }  // the LM head is tied: nothing is missing
    static constexpr const char* family = "GPT-2";
    static constexpr auto objective = models::Objective::causal_lm;
    static constexpr auto tokenizer = models::TokenizerKind::bpe;
    static std::vector<std::string> lora_targets() { return {"c_attn"}; }  // PEFT's default
    static constexpr bool weights_in_out = true;  // Conv1D

    // What init's --n-layer, --n-embd, --n-head, --vocab-size, --n-positions set.
    static constexpr std::array<const char*, 5> size_fields = {"n_layer", "n_embd", "n_head", "vocab_size",
                                                               "n_positions"};
    static constexpr std::array<std::size_t Config::*, 5> size_members = {
        &Config::n_layer, &Config::n_embd, &Config::n_head, &Config::vocab_size, &Config::n_positions};

    static Model create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng) {
        return gpt2::create(c, init, std::move(dropout_rng));
    }
    static models::Summary summary(const Config& c);  // sizes, no token types, resid_pdrop
    // input_ids, attention_mask and position_ids (packed sequences); GPT-2 takes no token types.
    template <class M>
    static Var logits(M& model, const data::Batch& in) {
        const IdTensor absent;  // the model's "not given"
        const IdTensor* mask = in.find_id("attention_mask");
        const IdTensor* positions = in.find_id("position_ids");
        return model(in.id("input_ids"), mask ? *mask : absent, positions ? *positions : absent);
    }
};

// The table's line (models/architectures.cpp): models::architecture_of<LMHead>(), compiled in architecture.cpp.
models::Architecture lm_head_entry();

// models::from_pretrained<LMHead>, under its earlier name.
inline Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                             std::shared_ptr<Generator> dropout_rng = nullptr) {
    return models::from_pretrained<LMHead>(dir, report, std::move(dropout_rng));
}

}  // namespace remat::gpt2
