#include "models/bert/bert.hpp"

#include <xtensor/xview.hpp>

#include "remat/layers/attention.hpp"
#include "remat/layers/init.hpp"
#include "remat/ops.hpp"

namespace remat::bert {

namespace {
Shape shape_of(const IdTensor& t) { return Shape(t.shape().begin(), t.shape().end()); }
}  // namespace

const hf::Naming& checkpoint_naming() {
    static const hf::Naming naming{
        "bert.", {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}, {"embeddings.position_ids"}};
    return naming;
}

void check_inputs(const Embeddings& e, const Inputs& in) {
    const Shape ids = shape_of(in.input_ids);
    if (ids.size() != 2) throw ShapeError("BertModel: expected input_ids (B, T), got " + to_string(ids));
    if (in.input_ids.size() == 0) throw ValueError("BertModel: empty batch, input_ids " + to_string(ids));
    if (ids[1] > e.position_embeddings.vocabulary())
        throw ValueError("BertModel: " + std::to_string(ids[1]) + " tokens exceed max_position_embeddings = " +
                         std::to_string(e.position_embeddings.vocabulary()));
    if (given(in.token_type_ids) && shape_of(in.token_type_ids) != ids)
        throw ShapeError("BertModel: token_type_ids " + to_string(shape_of(in.token_type_ids)) +
                         " do not match input_ids " + to_string(ids));
    if (given(in.attention_mask) && shape_of(in.attention_mask) != ids)
        throw ShapeError("BertModel: attention_mask " + to_string(shape_of(in.attention_mask)) +
                         " does not match input_ids " + to_string(ids));
}

Var Embeddings::operator()(const IdTensor& ids, const IdTensor& token_type_ids) const {
    const std::size_t T = ids.shape()[1];
    IdTensor positions = IdTensor::from_shape({T});
    for (std::size_t t = 0; t < T; ++t) positions(t) = static_cast<std::int64_t>(t);
    IdTensor types = given(token_type_ids) ? token_type_ids : IdTensor(ids.shape(), 0);
    Var x = REMAT_CALL(word_embeddings, ids) + REMAT_CALL(token_type_embeddings, types) +
            REMAT_CALL(position_embeddings, positions);
    return REMAT_CALL(dropout, REMAT_CALL(LayerNorm, x));
}

Var SelfAttention::operator()(const Var& x, const PaddingMask& mask) const {
    nn::check_rank("BertSelfAttention", x, 3, "(B, T, H)");
    Var q = REMAT_CALL(query, x), k = REMAT_CALL(key, x), v = REMAT_CALL(value, x);
    return nn::attention(q, k, v, num_attention_heads, {.key_padding = mask.get()}, &dropout);
}

Var ResidualOutput::operator()(const Var& x, const Var& residual) const {
    return REMAT_CALL(LayerNorm, REMAT_CALL(dropout, REMAT_CALL(dense, x)) + residual);
}

Var Attention::operator()(const Var& x, const PaddingMask& mask) const {
    return REMAT_CALL(output, REMAT_CALL(self, x, mask), x);
}

Var Intermediate::operator()(const Var& x) const { return nn::apply(act, REMAT_CALL(dense, x)); }

Var Layer::operator()(const Var& x, const PaddingMask& mask) const {
    Var a = REMAT_CALL(attention, x, mask);
    return REMAT_CALL(output, REMAT_CALL(intermediate, a), a);
}

Var Pooler::operator()(const Var& hidden) const {
    nn::check_rank("BertPooler", hidden, 3, "(B, T, H)");
    const auto B = static_cast<std::int64_t>(hidden.shape()[0]), H = static_cast<std::int64_t>(hidden.shape()[2]);
    Var first = ops::reshape(ops::slice_last(ops::reshape(hidden, {B, -1}), 0, static_cast<std::size_t>(H)), {B, H});
    return ops::tanh(REMAT_CALL(dense, first));
}

Var PredictionTransform::operator()(const Var& x) const {
    return REMAT_CALL(LayerNorm, nn::apply(act, REMAT_CALL(dense, x)));
}

Var Predictions::operator()(const Var& x, const nn::Embedding& word_embeddings) const {
    Var t = REMAT_CALL(transform, x);
    Var logits = ops::matmul(t, leaf(word_embeddings.weight), false, true);  // (B, T, H)·(V, H)ᵀ
    return logits + leaf(bias);
}

Var masked_lm_loss(const Var& logits, const IdTensor& labels) { return ops::cross_entropy(logits, labels, -100); }

namespace {
nn::Linear linear(std::size_t in, std::size_t out, float std, Generator& init) {
    return nn::Linear{Param{init::normal(Shape{out, in}, std, init)}, Param{zeros(Shape{out})}, std::nullopt};
}
}  // namespace

Layer Layer::create(const Config& c, Generator& init, const std::shared_ptr<Generator>& rng) {
    const float s = static_cast<float>(c.initializer_range);
    const std::size_t H = c.hidden_size;
    auto drop = [&](float p) { return nn::Dropout::create(p, rng); };
    return {Attention{SelfAttention{linear(H, H, s, init), linear(H, H, s, init), linear(H, H, s, init),
                                    drop(static_cast<float>(c.attention_probs_dropout_prob)), c.num_attention_heads},
                      ResidualOutput{linear(H, H, s, init), nn::LayerNorm::create(H, static_cast<float>(c.layer_norm_eps)),
                                     drop(static_cast<float>(c.hidden_dropout_prob))}},
            Intermediate{linear(H, c.intermediate_size, s, init), c.hidden_act},
            ResidualOutput{linear(c.intermediate_size, H, s, init), nn::LayerNorm::create(H, static_cast<float>(c.layer_norm_eps)),
                           drop(static_cast<float>(c.hidden_dropout_prob))}};
}

BaseModel create_base(const Config& c, Generator& init, std::shared_ptr<Generator> rng, bool with_pooler) {
    c.validate();
    if (!rng) rng = default_generator();
    const float s = static_cast<float>(c.initializer_range);
    Embeddings e{nn::Embedding::create(c.vocab_size, c.hidden_size, init, s),
                 nn::Embedding::create(c.max_position_embeddings, c.hidden_size, init, s),
                 nn::Embedding::create(c.type_vocab_size, c.hidden_size, init, s),
                 nn::LayerNorm::create(c.hidden_size, static_cast<float>(c.layer_norm_eps)), nn::Dropout::create(static_cast<float>(c.hidden_dropout_prob), rng)};
    // HF's word embedding has padding_idx = pad_token_id, and its init zeroes that row.
    if (c.pad_token_id < c.vocab_size) {
        float* row = e.word_embeddings.weight.value.data() + c.pad_token_id * c.hidden_size;
        std::fill(row, row + c.hidden_size, 0.0f);
    }
    std::vector<Layer> layers;
    layers.reserve(c.num_hidden_layers);
    for (std::size_t i = 0; i < c.num_hidden_layers; ++i) layers.push_back(Layer::create(c, init, rng));
    std::optional<Pooler> pooler;
    if (with_pooler) pooler = Pooler{linear(c.hidden_size, c.hidden_size, s, init)};
    return BaseModel{std::move(e), Encoder<Layer>{std::move(layers)}, std::move(pooler)};
}

Model create(const Config& c, Generator& init, std::shared_ptr<Generator> rng) {
    BaseModel base = create_base(c, init, std::move(rng), false);
    MLMHead head{Predictions{PredictionTransform{linear(c.hidden_size, c.hidden_size, static_cast<float>(c.initializer_range), init),
                                                nn::LayerNorm::create(c.hidden_size, static_cast<float>(c.layer_norm_eps)), c.hidden_act},
                             Param{zeros(Shape{c.vocab_size})}}};
    return Model{std::move(base), std::move(head)};
}

}  // namespace remat::bert
