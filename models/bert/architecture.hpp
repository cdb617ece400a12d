#pragma once
// BertForMaskedLM's and BertModel's facts for the architecture table (models/architecture_of.hpp,
// docs/models.md).
#include <array>
#include <string>
#include <vector>

#include "models/architecture.hpp"
#include "models/pretrained.hpp"
#include "models/bert/bert.hpp"

namespace remat::bert {

// What the two BERT classes share: the config and its sizes.
struct Facts {
    using Config = bert::Config;
    static constexpr const char* model_type = "bert";
    static constexpr const char* family = "BERT";
    static constexpr auto tokenizer = models::TokenizerKind::wordpiece;
    static std::vector<std::string> lora_targets() { return {"query", "value"}; }  // PEFT's default
    static constexpr std::array<const char*, 5> size_fields = {"num_hidden_layers", "hidden_size",
                                                               "num_attention_heads", "vocab_size",
                                                               "max_position_embeddings"};
    static constexpr std::array<std::size_t Config::*, 5> size_members = {
        &Config::num_hidden_layers, &Config::hidden_size, &Config::num_attention_heads, &Config::vocab_size,
        &Config::max_position_embeddings};
    static models::Summary summary(const Config& c);  // sizes, type_vocab_size, hidden_dropout_prob
    // --n-embd also sets intermediate_size = 4x, BERT's ratio (3072 = 4·768).
    static void resized(Config& c, const models::SizeRequest& r) {
        if (r.n_embd) c.intermediate_size = 4 * c.hidden_size;
    }
    template <class M>
    static Var logits(M& model, const data::Batch& in) {
        const IdTensor* types = in.find_id("token_type_ids");
        const IdTensor* mask = in.find_id("attention_mask");
        return model(Inputs{in.id("input_ids"), types ? *types : IdTensor(), mask ? *mask : IdTensor()});
    }
};

struct MaskedLM : Facts {
    static constexpr const char* hf_class = "BertForMaskedLM";
    static std::vector<std::string> also_loads() { return {}; }
    static constexpr auto objective = models::Objective::masked_lm;
    static Model create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng) {
        return bert::create(c, init, std::move(dropout_rng));
    }
};

// A bare encoder checkpoint: no masked-LM head to load.
struct Base : Facts {
    static constexpr const char* hf_class = "BertModel";
    static std::vector<std::string> also_loads() { return {}; }
    static constexpr auto objective = models::Objective::none;
    static BaseModel create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng) {
        return bert::create_base(c, init, std::move(dropout_rng));
    }
};

// The table's lines (models/architectures.cpp): models::architecture_of<MaskedLM>() (architecture.cpp)
// and <Base>() (base_architecture.cpp).
models::Architecture masked_lm_entry();
models::Architecture base_entry();

// models::from_pretrained<MaskedLM>, under its earlier name. Warnings (e.g. the pooler and next-sentence head a masked-LM model does not use) go to `report`.
inline Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                             std::shared_ptr<Generator> dropout_rng = nullptr) {
    return models::from_pretrained<MaskedLM>(dir, report, std::move(dropout_rng));
}

}  // namespace remat::bert
