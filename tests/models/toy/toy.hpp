#pragma once
// A toy architecture, added the way docs/models.md says a new one is added — its structs, its HF
// facts, its config schema — but from the test tree, registered at run time: a causal LM whose
// blocks are one fused causal self-attention with a residual, over a token and position embedding,
// with an untied head. ToyLMHeadModel, model_type "toy".
#include <memory>
#include <vector>

#include "models/architecture.hpp"
#include "models/common/config_file.hpp"
#include "remat/checkpoint.hpp"
#include "remat/hf/naming.hpp"
#include "remat/layers/attention.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/layers/activation.hpp"
#include "remat/layers/embedding.hpp"
#include "remat/layers/linear.hpp"

namespace toy {

using namespace remat;

struct Config : models::ConfigFile<Config> {
    std::size_t vocab_size = 40, n_positions = 16, n_embd = 8, n_layer = 3, n_head = 2;
    double dropout = 0.1, initializer_range = 0.02;
    nn::Activation activation = nn::Activation::relu;
    static const config_json::Schema<Config>& schema();
};

// y = x + drop(proj(act(attention(qkv(x)))))
struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::Linear, qkv), (nn::Linear, proj), (nn::Dropout, drop), (nn::Activation, act),
                             (std::size_t, n_head));
    static constexpr const char* name = "ToyBlock";
    static constexpr bool is_block = true;
    Var operator()(const Var& x) const;
};

template <class B>
struct ToyLMHeadModel {
    BOOST_HANA_DEFINE_STRUCT(ToyLMHeadModel, (nn::Embedding, wte), (nn::Embedding, wpe), (std::vector<B>, h),
                             (nn::Linear, lm_head));
    static constexpr const char* name = "ToyLMHeadModel";
    static const hf::Naming& hf_naming();

    Var operator()(const IdTensor& ids) { return nn::call("lm_head", lm_head, run_blocks(h, "h", embed(ids))); }
    Var embed(const IdTensor& ids) const;
    Var loss(const Var& logits, const IdTensor& labels) const;  // next-token cross-entropy
};
template <class B>
ToyLMHeadModel(nn::Embedding, nn::Embedding, std::vector<B>, nn::Linear) -> ToyLMHeadModel<B>;

using Model = ToyLMHeadModel<Block>;
Model create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng);

// Its facts for the table.
struct Facts {
    using Config = toy::Config;
    static constexpr const char* model_type = "toy";
    static constexpr const char* hf_class = "ToyLMHeadModel";
    static std::vector<std::string> also_loads() { return {"ToyModel"}; }
    static constexpr const char* family = "Toy";
    static constexpr auto objective = models::Objective::causal_lm;
    static constexpr auto tokenizer = models::TokenizerKind::bpe;
    static constexpr std::array<const char*, 5> size_fields = {"n_layer", "n_embd", "n_head", "vocab_size",
                                                               "n_positions"};
    static constexpr std::array<std::size_t Config::*, 5> size_members = {
        &Config::n_layer, &Config::n_embd, &Config::n_head, &Config::vocab_size, &Config::n_positions};
    static Model create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng) {
        return toy::create(c, init, std::move(dropout_rng));
    }
    static models::Summary summary(const Config& c);
    template <class M>
    static Var logits(M& model, const data::Batch& in) {
        return model(in.id("input_ids"));
    }
};

// Registers the toy architecture once (later calls do nothing).
void register_once();

}  // namespace toy
