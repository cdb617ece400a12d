#include "models/gpt2/gpt2.hpp"

#include <algorithm>
#include <cmath>

#include "remat/layers/attention.hpp"
#include "remat/layers/init.hpp"
#include "remat/ops.hpp"

namespace remat::gpt2 {

const hf::Naming& checkpoint_naming() {
    static const hf::Naming naming{"transformer.", {"lm_head.weight"}, {".attn.bias", ".attn.masked_bias"}};
    return naming;
}

Var Attention::operator()(const Var& x, const nn::PaddingMask& padding, const nn::SequenceStarts& starts,
                          nn::KVCache* cache) const {
    nn::check_rank("GPT2Attention", x, 3, "(B, T, C)");
    Var qkv = REMAT_CALL(c_attn, x);  // (B, T, 3C)
    const ops::SoftmaxMask mask{.causal = true, .key_padding = padding.get(), .key_start = starts.get()};
    Var y;
    if (!cache) {
        y = nn::self_attention(qkv, n_head, mask, &attn_dropout);
    } else {
        const std::size_t C = qkv.shape()[2] / 3;
        const std::vector<Var> q_k_v = ops::split_last(qkv, {C, C, C});
        const auto [k, v] = cache->append(q_k_v[1], q_k_v[2]);  // (B, T_past + T, C)
        y = nn::attention(q_k_v[0], k, v, n_head, mask, &attn_dropout);
    }
    return REMAT_CALL(resid_dropout, REMAT_CALL(c_proj, y));
}

Var MLP::operator()(const Var& x) const {
    Var h = REMAT_CALL(c_fc, x);
    return REMAT_CALL(dropout, REMAT_CALL(c_proj, nn::apply(act, h)));
}

Var Block::operator()(const Var& x, const nn::PaddingMask& padding, const nn::SequenceStarts& starts, nn::KVCache* cache) const {
    Var h = x + REMAT_CALL(attn, REMAT_CALL(ln_1, x), padding, starts, cache);
    return h + REMAT_CALL(mlp, REMAT_CALL(ln_2, h));
}

Block Block::create(const Config& c, Generator& init, const std::shared_ptr<Generator>& rng) {
    const float proj_std = static_cast<float>(c.initializer_range) / std::sqrt(2.0f * static_cast<float>(c.n_layer));
    return {nn::LayerNorm::create(c.n_embd, static_cast<float>(c.layer_norm_epsilon)),
            Attention{nn::Conv1D::create(c.n_embd, 3 * c.n_embd, init, static_cast<float>(c.initializer_range)),
                      nn::Conv1D::create(c.n_embd, c.n_embd, init, proj_std), nn::Dropout::create(static_cast<float>(c.attn_pdrop), rng),
                      nn::Dropout::create(static_cast<float>(c.resid_pdrop), rng), c.n_head},
            nn::LayerNorm::create(c.n_embd, static_cast<float>(c.layer_norm_epsilon)),
            MLP{nn::Conv1D::create(c.n_embd, c.inner(), init, static_cast<float>(c.initializer_range)),
                nn::Conv1D::create(c.inner(), c.n_embd, init, proj_std), nn::Dropout::create(static_cast<float>(c.resid_pdrop), rng),
                c.activation_function}};
}

Model create(const Config& c, Generator& init, std::shared_ptr<Generator> rng) {
    c.validate();
    if (!rng) rng = default_generator();
    std::vector<Block> h;
    h.reserve(c.n_layer);
    auto wte = nn::Embedding::create(c.vocab_size, c.n_embd, init, static_cast<float>(c.initializer_range));
    auto wpe = nn::Embedding::create(c.n_positions, c.n_embd, init, static_cast<float>(c.initializer_range));
    for (std::size_t i = 0; i < c.n_layer; ++i) h.push_back(Block::create(c, init, rng));
    return Model{GPT2Model<Block>{std::move(wte), std::move(wpe), nn::Dropout::create(static_cast<float>(c.embd_pdrop), rng), std::move(h),
                                  nn::LayerNorm::create(c.n_embd, static_cast<float>(c.layer_norm_epsilon))}};
}

Var embed(const nn::Embedding& wte, const nn::Embedding& wpe, const nn::Dropout& drop, const IdTensor& ids,
          const IdTensor* position_ids) {
    if (ids.dimension() != 2)
        throw ShapeError("GPT2Model: expected input ids (B, T), got " + to_string(Shape(ids.shape().begin(), ids.shape().end())));
    const std::size_t T = ids.shape()[1];
    if (position_ids) {  // generation, packed sequences: each sequence's own positions, (B, T)
        if (!std::equal(ids.shape().begin(), ids.shape().end(), position_ids->shape().begin(), position_ids->shape().end()))
            throw ShapeError("GPT2Model: position_ids " + to_string(Shape(position_ids->shape().begin(), position_ids->shape().end())) +
                             " do not match input ids " + to_string(Shape(ids.shape().begin(), ids.shape().end())));
        for (const std::int64_t p : *position_ids)
            if (p < 0 || static_cast<std::size_t>(p) >= wpe.vocabulary())
                throw ValueError("GPT2Model: position " + std::to_string(p) + " is beyond n_positions = " + std::to_string(wpe.vocabulary()));
        return REMAT_CALL(drop, REMAT_CALL(wte, ids) + REMAT_CALL(wpe, *position_ids));
    }
    if (T > wpe.vocabulary())
        throw ValueError("GPT2Model: " + std::to_string(T) + " tokens exceed n_positions = " +
                         std::to_string(wpe.vocabulary()));
    IdTensor positions = IdTensor::from_shape({T});
    for (std::size_t t = 0; t < T; ++t) positions(t) = static_cast<std::int64_t>(t);
    Var x = REMAT_CALL(wte, ids) + REMAT_CALL(wpe, positions);  // (B, T, C) + (T, C)
    return REMAT_CALL(drop, x);
}

Var lm_head(const nn::Embedding& wte, const Var& hidden) {
    return ops::matmul(hidden, leaf(wte.weight), false, true);  // (B, T, C)·(V, C)ᵀ
}

}  // namespace remat::gpt2
