#include "models/llama/llama.hpp"

#include <algorithm>
#include <tuple>

#include "remat/layers/init.hpp"
#include "remat/ops.hpp"

namespace remat::llama {

const hf::Naming& checkpoint_naming() {
    static const hf::Naming naming{"model.", {"lm_head.weight"}, {".rotary_emb.inv_freq"}};
    return naming;
}

Var Attention::operator()(const Var& x, const Context& context) const {
    nn::check_rank("LlamaAttention", x, 3, "(B, T, C)");
    const Tensor &cos = *context.rope.cos, &sin = *context.rope.sin;
    Var q = ops::rotary(REMAT_CALL(q_proj, x), cos, sin);
    Var k = ops::rotary(REMAT_CALL(k_proj, x), cos, sin);
    Var v = REMAT_CALL(v_proj, x);
    const ops::SoftmaxMask mask{.causal = true,
                                .key_padding = context.padding.get(),
                                .window = sliding_window,
                                .combined = true,  // transformers' masking_utils
                                .key_start = context.starts.get()};
    if (context.cache) std::tie(k, v) = context.cache->append(k, v);  // every position so far
    return REMAT_CALL(o_proj, nn::attention(q, k, v, num_heads, mask, &attention_dropout));
}

Var MLP::operator()(const Var& x) const {
    Var gate = REMAT_CALL(gate_proj, x), up = REMAT_CALL(up_proj, x);
    Var h = act_fn == Activation::silu ? ops::silu_mul(gate, up) : ops::mul(nn::apply(act_fn, gate), up);
    return REMAT_CALL(down_proj, h);
}

Var DecoderLayer::operator()(const Var& x, const Context& context) const {
    Var h = x + REMAT_CALL(self_attn, REMAT_CALL(input_layernorm, x), context);
    return h + REMAT_CALL(mlp, REMAT_CALL(post_attention_layernorm, h));
}

namespace {
// nn.Linear as HF's _init_weights leaves it: weight (out, in) N(0, std²), bias 0.
nn::Linear linear(std::size_t in, std::size_t out, bool bias, Generator& init, float std) {
    nn::Linear l{Param{init::normal(Shape{out, in}, std, init)}, std::nullopt, std::nullopt};
    if (bias) l.bias = Param{zeros(Shape{out})};
    return l;
}
}  // namespace

DecoderLayer DecoderLayer::create(const Settings& s, std::size_t index, Generator& init,
                                  const std::shared_ptr<Generator>& rng) {
    const Fields& f = s.fields;
    const std::size_t C = f.hidden_size, D = f.head_size(), H = f.num_attention_heads, Hkv = f.kv_heads();
    const auto std = static_cast<float>(f.initializer_range), eps = static_cast<float>(f.rms_norm_eps);
    const std::size_t window = index < s.windows.size() ? s.windows[index] : 0;
    Attention attention{linear(C, H * D, s.qkv_bias, init, std),
                        linear(C, Hkv * D, s.qkv_bias, init, std),
                        linear(C, Hkv * D, s.qkv_bias, init, std),
                        linear(H * D, C, s.o_bias, init, std),
                        nn::Dropout::create(static_cast<float>(f.attention_dropout), rng),
                        H,
                        window};
    MLP mlp{linear(C, f.intermediate_size, s.mlp_bias, init, std), linear(C, f.intermediate_size, s.mlp_bias, init, std),
            linear(f.intermediate_size, C, s.mlp_bias, init, std), f.hidden_act};
    return {std::move(attention), std::move(mlp), nn::RMSNorm::create(C, eps), nn::RMSNorm::create(C, eps)};
}

Model create(const Settings& s, Generator& init, std::shared_ptr<Generator> rng) {
    if (!rng) rng = default_generator();
    const Fields& f = s.fields;
    const auto std = static_cast<float>(f.initializer_range);
    auto embed = nn::Embedding::create(f.vocab_size, f.hidden_size, init, std);
    std::vector<DecoderLayer> layers;
    layers.reserve(f.num_hidden_layers);
    for (std::size_t i = 0; i < f.num_hidden_layers; ++i) layers.push_back(DecoderLayer::create(s, i, init, rng));
    std::optional<nn::Linear> head;
    if (!f.tie_word_embeddings) head = linear(f.hidden_size, f.vocab_size, false, init, std);
    nn::RotaryEmbedding rope{nn::rope_inverse_frequencies(f.head_size(), f.rope_theta, f.rope_scaling)};
    return Model{LlamaModel<DecoderLayer>{std::move(embed), std::move(layers),
                                          nn::RMSNorm::create(f.hidden_size, static_cast<float>(f.rms_norm_eps)),
                                          std::move(rope)},
                 std::move(head)};
}

std::size_t parameter_count(const Settings& s) {
    const Fields& f = s.fields;
    const std::size_t C = f.hidden_size, Q = f.num_attention_heads * f.head_size(), KV = f.kv_heads() * f.head_size();
    const std::size_t I = f.intermediate_size, V = f.vocab_size;
    const std::size_t attention = C * Q + 2 * C * KV + Q * C + (s.qkv_bias ? Q + 2 * KV : 0) + (s.o_bias ? C : 0);
    const std::size_t mlp = 3 * C * I + (s.mlp_bias ? 2 * I + C : 0);
    return V * C + f.num_hidden_layers * (attention + mlp + 2 * C) + C + (f.tie_word_embeddings ? 0 : V * C);
}

Context make_context(const nn::RotaryEmbedding& rope, const IdTensor& ids, const IdTensor& attention_mask,
                     const IdTensor& position_ids) {
    auto shape = [](const IdTensor& t) { return to_string(Shape(t.shape().begin(), t.shape().end())); };
    if (ids.dimension() != 2) throw ShapeError("LlamaModel: expected input ids (B, T), got " + shape(ids));
    Context context;
    if (nn::given(position_ids)) {
        if (!std::equal(ids.shape().begin(), ids.shape().end(), position_ids.shape().begin(), position_ids.shape().end()))
            throw ShapeError("LlamaModel: position_ids " + shape(position_ids) + " do not match input ids " + shape(ids));
        context.rope = rope.tables(position_ids);
        context.starts = nn::sequence_starts(position_ids);
    } else {
        context.rope = rope.tables(ids.shape()[1]);
    }
    if (nn::given(attention_mask)) {
        models::check_mask("LlamaModel", ids, attention_mask);
        context.padding = nn::padding_mask(attention_mask);
    }
    return context;
}

Context decoding_context(const nn::RotaryEmbedding& rope, const IdTensor& positions, nn::KVCache& cache) {
    return {.padding = cache.key_padding(), .rope = rope.tables(positions), .cache = &cache};
}

Var tied_head(const nn::Embedding& embed_tokens, const Var& hidden) {
    return ops::matmul(hidden, leaf(embed_tokens.weight), false, true);  // (B, T, C)·(V, C)ᵀ
}

}  // namespace remat::llama
