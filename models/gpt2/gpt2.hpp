#pragma once
// GPT-2 as in HuggingFace transformers (modeling_gpt2.py), field for field, so that parameter paths
// are HF's names: transformer.h.3.attn.c_attn.weight.
//
//   Block (GPT2Block, pre-LN):  h = x + attn(ln_1(x));  y = h + mlp(ln_2(h))
//   Attention (GPT2Attention):  c_attn → q, k, v (in that order) → causal softmax(q·kᵀ/√D) · v → c_proj
//   MLP (GPT2MLP):              c_proj(act(c_fc(x))), act = gelu_new (tanh) by default
//   GPT2Model:                  ln_f(h[n-1](… h[0](drop(wte[ids] + wpe[positions]))))
//   GPT2LMHeadModel:            logits = transformer(ids) · wteᵀ (tied: no lm_head member)
#include <memory>
#include <vector>

#include "models/common/causal_lm.hpp"
#include "models/gpt2/config.hpp"
#include "remat/checkpoint.hpp"
#include "remat/hf/naming.hpp"
#include "remat/layers/attention.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/layers/embedding.hpp"
#include "remat/layers/kv_cache.hpp"
#include "remat/layers/linear.hpp"
#include "remat/layers/norm.hpp"

namespace remat::gpt2 {

struct Attention {
    BOOST_HANA_DEFINE_STRUCT(Attention, (nn::Conv1D, c_attn), (nn::Conv1D, c_proj), (nn::Dropout, attn_dropout),
                             (nn::Dropout, resid_dropout), (std::size_t, n_head));
    static constexpr const char* name = "GPT2Attention";
    // (B, T, C) -> (B, T, C); padding (B, T) masks keys as HF's attention_mask does, starts keeps
    // packed sequences apart (either may be null). With a cache (generation), x holds the new
    // positions and the keys are all the cache's.
    Var operator()(const Var& x, const nn::PaddingMask& padding = nullptr, const nn::SequenceStarts& starts = nullptr,
                   nn::KVCache* cache = nullptr) const;
};

struct MLP {
    BOOST_HANA_DEFINE_STRUCT(MLP, (nn::Conv1D, c_fc), (nn::Conv1D, c_proj), (nn::Dropout, dropout),
                             (Activation, act));
    static constexpr const char* name = "GPT2MLP";
    Var operator()(const Var& x) const;
};

struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::LayerNorm, ln_1), (Attention, attn), (nn::LayerNorm, ln_2), (MLP, mlp));
    static constexpr const char* name = "GPT2Block";
    static constexpr bool is_block = true;  // set_checkpointing wraps these

    static Block create(const Config& config, Generator& init, const std::shared_ptr<Generator>& dropout_rng);
    Var operator()(const Var& x, const nn::PaddingMask& padding = nullptr, const nn::SequenceStarts& starts = nullptr,
                   nn::KVCache* cache = nullptr) const;
};

// How HF's GPT-2 checkpoints name tensors beyond the model's paths: the base prefix "transformer.",
// the tied lm_head.weight, and the old attention-mask buffers attn.bias and attn.masked_bias.
const hf::Naming& checkpoint_naming();

// Implementation details shared by the templates (compiled once).
// positions (B, T), or null for 0 … T−1.
Var embed(const nn::Embedding& wte, const nn::Embedding& wpe, const nn::Dropout& drop, const IdTensor& ids,
          const IdTensor* positions = nullptr);
Var lm_head(const nn::Embedding& wte, const Var& hidden);

template <class B>
struct GPT2Model {
    BOOST_HANA_DEFINE_STRUCT(GPT2Model, (nn::Embedding, wte), (nn::Embedding, wpe), (nn::Dropout, drop),
                             (std::vector<B>, h), (nn::LayerNorm, ln_f));
    static constexpr const char* name = "GPT2Model";
    static const hf::Naming& hf_naming() { return checkpoint_naming(); }

    // ids (B, T) -> hidden states (B, T, C). attention_mask (B, T) of 1/0, optional, masks padded
    // keys as in HF (positions are not shifted: pass left-padded batches at your own risk, as in HF).
    // position_ids (B, T), optional (else 0 … T−1): where they restart, a new sequence packed into the
    // row begins, attending only within itself (nn::sequence_starts, as transformers' packed sequences).
    Var operator()(const IdTensor& ids, const IdTensor& attention_mask = IdTensor(), const IdTensor& position_ids = IdTensor()) {
        if (!nn::given(position_ids) && !nn::given(attention_mask)) return REMAT_CALL(ln_f, run_blocks(h, "h", embed(ids)));
        const Var x = nn::given(position_ids) ? gpt2::embed(wte, wpe, drop, ids, &position_ids) : embed(ids);
        nn::PaddingMask padding = nullptr;
        if (nn::given(attention_mask)) {
            models::check_mask("GPT2Model", ids, attention_mask);
            padding = nn::padding_mask(attention_mask);
        }
        const nn::SequenceStarts starts = nn::given(position_ids) ? nn::sequence_starts(position_ids) : nullptr;
        return REMAT_CALL(ln_f, run_blocks(h, "h", x, padding, starts));
    }

    // Generation, under no-grad: the new tokens ids (B, T) after those `cache` holds -> their hidden
    // states (B, T, C). attention_mask (B, T) marks the new tokens' padding (a left-padded prompt), if any;
    // positions follow HF's generate (layers/kv_cache.hpp).
    Var operator()(const IdTensor& ids, nn::KVCache& cache, const IdTensor& attention_mask = IdTensor()) {
        nn::KVCache::Step step(cache, attention_mask, ids.dimension() == 2 ? ids.shape()[1] : 0);
        Var x = gpt2::embed(wte, wpe, drop, ids, &step.positions());
        Var y = REMAT_CALL(ln_f, run_blocks(h, "h", x, cache.key_padding(), nn::SequenceStarts(), &cache));
        step.finish();
        return y;
    }

    Var embed(const IdTensor& ids) const;  // drop(wte[ids] + wpe[0..T-1])
};
template <class B>
GPT2Model(nn::Embedding, nn::Embedding, nn::Dropout, std::vector<B>, nn::LayerNorm) -> GPT2Model<B>;

template <class B>
struct GPT2LMHeadModel {
    BOOST_HANA_DEFINE_STRUCT(GPT2LMHeadModel, (GPT2Model<B>, transformer));
    static constexpr const char* name = "GPT2LMHeadModel";
    static const hf::Naming& hf_naming() { return checkpoint_naming(); }

    // ids (B, T) -> logits (B, T, V), through the tied embedding.
    Var operator()(const IdTensor& ids, const IdTensor& attention_mask = IdTensor(), const IdTensor& position_ids = IdTensor()) {
        return lm_head(REMAT_CALL(transformer, ids, attention_mask, position_ids));
    }
    Var lm_head(const Var& hidden) const;
    // Generation: the logits (B, V) of the last of the new tokens ids (B, T), run after those in `cache`.
    Var next_logits(const IdTensor& ids, nn::KVCache& cache, const IdTensor& attention_mask = IdTensor()) {
        return lm_head(models::last_position(transformer(ids, cache, attention_mask)));
    }
    // The most positions a sequence may have (n_positions).
    std::size_t context_length() const { return transformer.wpe.vocabulary(); }
    // HF's loss: mean cross-entropy of logits[:, t] against labels[:, t + 1] over labels ≠ -100.
    // Pass the input ids as labels for plain language modelling.
    Var loss(const Var& logits, const IdTensor& labels) const;
};
template <class B>
GPT2LMHeadModel(GPT2Model<B>) -> GPT2LMHeadModel<B>;

using Model = GPT2LMHeadModel<Block>;

// A freshly initialised model as HF initialises one: weights N(0, initializer_range) (c_proj
// weights scaled by 1/√(2·n_layer)), biases 0, LayerNorm 1 and 0. Dropouts draw from dropout_rng
// (the shared default generator when null).
Model create(const Config& config, Generator& init, std::shared_ptr<Generator> dropout_rng = nullptr);

template <class B>
Var GPT2Model<B>::embed(const IdTensor& ids) const {
    return gpt2::embed(wte, wpe, drop, ids);
}
template <class B>
Var GPT2LMHeadModel<B>::lm_head(const Var& hidden) const {
    return gpt2::lm_head(transformer.wte, hidden);
}
template <class B>
Var GPT2LMHeadModel<B>::loss(const Var& logits, const IdTensor& labels) const {
    return models::shifted_loss("GPT2LMHeadModel", logits, labels);
}

}  // namespace remat::gpt2
