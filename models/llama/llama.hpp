#pragma once
// The Llama family as in HuggingFace transformers 4.57 (modeling_llama.py; Qwen2's and Mistral's
// modules are copies of these), field for field, so that parameter paths are HF's names:
// model.layers.3.self_attn.q_proj.weight.
//
//   Decoder layer (pre-norm):  h = x + self_attn(input_layernorm(x));  y = h + mlp(post_attention_layernorm(h))
//   Attention:                 q, k = rotary(q_proj(x)), rotary(k_proj(x)); v = v_proj(x);
//                              causal softmax(q·kᵀ/√D) · v with k, v shared by groups of query heads
//                              (grouped-query attention), optionally within a sliding window; o_proj
//   MLP (SwiGLU):              down_proj(act(gate_proj(x)) ⊙ up_proj(x)), act = silu
//   LlamaModel:                norm(layers[n-1](… layers[0](embed_tokens[ids])))
//   LlamaForCausalLM:          logits = lm_head(model(ids)), or model(ids)·embed_tokensᵀ when tied
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "models/common/causal_lm.hpp"
#include "models/llama/config.hpp"
#include "remat/checkpoint.hpp"
#include "remat/hf/naming.hpp"
#include "remat/layers/attention.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/layers/embedding.hpp"
#include "remat/layers/kv_cache.hpp"
#include "remat/layers/linear.hpp"
#include "remat/layers/norm.hpp"
#include "remat/layers/rotary.hpp"

namespace remat::llama {

// What every layer takes beside its input: the padding mask and the rotary tables of this batch,
// shared, so that checkpointed layers keep them until their recomputation.
struct Context {
    nn::PaddingMask padding = nullptr;  // (B, T) of 1/0, or null; with a cache, over all its positions
    nn::SequenceStarts starts = nullptr;  // packed sequences (position_ids that restart), or null
    nn::RotaryTables rope;
    nn::KVCache* cache = nullptr;       // generation: keys and values of the positions before x's
};

struct Attention {
    BOOST_HANA_DEFINE_STRUCT(Attention, (nn::Linear, q_proj), (nn::Linear, k_proj), (nn::Linear, v_proj),
                             (nn::Linear, o_proj), (nn::Dropout, attention_dropout), (std::size_t, num_heads),
                             (std::size_t, sliding_window));  // 0: full causal attention
    static constexpr const char* name = "LlamaAttention";
    Var operator()(const Var& x, const Context& context) const;  // (B, T, C) -> (B, T, C)
};

struct MLP {
    BOOST_HANA_DEFINE_STRUCT(MLP, (nn::Linear, gate_proj), (nn::Linear, up_proj), (nn::Linear, down_proj),
                             (Activation, act_fn));
    static constexpr const char* name = "LlamaMLP";
    Var operator()(const Var& x) const;
};

struct DecoderLayer {
    BOOST_HANA_DEFINE_STRUCT(DecoderLayer, (Attention, self_attn), (MLP, mlp), (nn::RMSNorm, input_layernorm),
                             (nn::RMSNorm, post_attention_layernorm));
    static constexpr const char* name = "LlamaDecoderLayer";
    static constexpr bool is_block = true;  // set_checkpointing wraps these

    static DecoderLayer create(const Settings& settings, std::size_t index, Generator& init,
                               const std::shared_ptr<Generator>& dropout_rng);
    Var operator()(const Var& x, const Context& context) const;
};

// HF's checkpoints beyond the model's paths: the base prefix "model.", the tied lm_head.weight, and
// the rotary inv_freq buffers older checkpoints carry.
const hf::Naming& checkpoint_naming();

// What create() builds, counted from the settings alone (HF's num_parameters()).
std::size_t parameter_count(const Settings& settings);

// Compiled once for every instantiation.
// position_ids (B, T), optional: each token's rotary position; where they restart, a new packed
// sequence begins (nn::sequence_starts).
Context make_context(const nn::RotaryEmbedding& rope, const IdTensor& ids, const IdTensor& attention_mask,
                     const IdTensor& position_ids);
// Generation: the rotary tables of the new tokens' positions, the cache's mask and the cache.
Context decoding_context(const nn::RotaryEmbedding& rope, const IdTensor& positions, nn::KVCache& cache);
Var tied_head(const nn::Embedding& embed_tokens, const Var& hidden);

template <class B>
struct LlamaModel {
    BOOST_HANA_DEFINE_STRUCT(LlamaModel, (nn::Embedding, embed_tokens), (std::vector<B>, layers), (nn::RMSNorm, norm),
                             (nn::RotaryEmbedding, rotary_emb));
    static constexpr const char* name = "LlamaModel";
    static const hf::Naming& hf_naming() { return checkpoint_naming(); }

    // ids (B, T) -> hidden states (B, T, C). attention_mask (B, T) of 1/0, optional, masks padded
    // keys; positions are 0 … T−1 whatever the padding, as HF's forward without position_ids.
    // position_ids (B, T), optional: packed sequences where they restart (make_context).
    Var operator()(const IdTensor& ids, const IdTensor& attention_mask = IdTensor(), const IdTensor& position_ids = IdTensor()) {
        const Context context = llama::make_context(rotary_emb, ids, attention_mask, position_ids);
        return REMAT_CALL(norm, run_blocks(layers, "layers", REMAT_CALL(embed_tokens, ids), context));
    }
    // Generation, under no-grad: the new tokens ids (B, T) after those `cache` holds -> their hidden
    // states (B, T, C). attention_mask (B, T) marks the new tokens' padding (a left-padded prompt), if any;
    // positions follow HF's generate (layers/kv_cache.hpp).
    Var operator()(const IdTensor& ids, nn::KVCache& cache, const IdTensor& attention_mask = IdTensor()) {
        nn::KVCache::Step step(cache, attention_mask, ids.dimension() == 2 ? ids.shape()[1] : 0);
        const Context context = llama::decoding_context(rotary_emb, step.positions(), cache);
        Var y = REMAT_CALL(norm, run_blocks(layers, "layers", REMAT_CALL(embed_tokens, ids), context));
        step.finish();
        return y;
    }
};
template <class B>
LlamaModel(nn::Embedding, std::vector<B>, nn::RMSNorm, nn::RotaryEmbedding) -> LlamaModel<B>;

template <class B>
struct LlamaForCausalLM {
    BOOST_HANA_DEFINE_STRUCT(LlamaForCausalLM, (LlamaModel<B>, model), (std::optional<nn::Linear>, lm_head));
    static constexpr const char* name = "LlamaForCausalLM";
    static const hf::Naming& hf_naming() { return checkpoint_naming(); }

    // ids (B, T) -> logits (B, T, V); through the embedding when lm_head is absent (tied).
    Var operator()(const IdTensor& ids, const IdTensor& attention_mask = IdTensor(), const IdTensor& position_ids = IdTensor()) {
        Var hidden = REMAT_CALL(model, ids, attention_mask, position_ids);
        return lm_head ? nn::call("lm_head", *lm_head, hidden) : tied_head(model.embed_tokens, hidden);
    }
    // Generation: the logits (B, V) of the last of the new tokens ids (B, T), run after those in `cache`.
    Var next_logits(const IdTensor& ids, nn::KVCache& cache, const IdTensor& attention_mask = IdTensor()) {
        Var last = models::last_position(model(ids, cache, attention_mask));
        return lm_head ? (*lm_head)(last) : tied_head(model.embed_tokens, last);
    }
    // RoPE has no hard limit: the longest a sequence may be, as far as the model knows.
    std::size_t context_length() const { return std::numeric_limits<std::size_t>::max(); }
    // HF's loss (models::shifted_loss); pass the input ids as labels for plain language modelling.
    Var loss(const Var& logits, const IdTensor& labels) const { return models::shifted_loss(name, logits, labels); }
};
template <class B>
LlamaForCausalLM(LlamaModel<B>, std::optional<nn::Linear>) -> LlamaForCausalLM<B>;

using Model = LlamaForCausalLM<DecoderLayer>;

// A freshly initialised model as HF initialises one (_init_weights): Linear and Embedding weights
// N(0, initializer_range), biases 0, RMSNorm weights 1; no lm_head when tied. Dropouts draw from
// dropout_rng (the shared default generator when null).
Model create(const Settings& settings, Generator& init, std::shared_ptr<Generator> dropout_rng = nullptr);


}  // namespace remat::llama
