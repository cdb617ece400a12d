#include "remat/layers/attention.hpp"

#include <limits>

#include "remat/ops/attention.hpp"

namespace remat::nn {

PaddingMask padding_mask(const IdTensor& attention_mask) {
    Tensor m = empty(Shape(attention_mask.shape().begin(), attention_mask.shape().end()));
    for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = attention_mask.data()[i] != 0 ? 1.0f : 0.0f;
    return std::make_shared<const Tensor>(std::move(m));
}

SequenceStarts sequence_starts(const IdTensor& position_ids) {
    if (position_ids.dimension() != 2)
        throw ShapeError("position_ids must be (batch, positions), got " +
                         remat::to_string(Shape(position_ids.shape().begin(), position_ids.shape().end())));
    const std::size_t B = position_ids.shape()[0], T = position_ids.shape()[1];
    IdTensor starts = IdTensor::from_shape({B, T});
    bool packed = false;
    for (std::size_t b = 0; b < B; ++b) {
        const std::int64_t* p = position_ids.data() + b * T;
        std::int64_t* s = starts.data() + b * T;
        for (std::size_t t = 0; t < T; ++t) {
            const bool continues = t > 0 && p[t - 1] < std::numeric_limits<std::int64_t>::max() && p[t] == p[t - 1] + 1;
            s[t] = continues ? s[t - 1] : static_cast<std::int64_t>(t);
            packed = packed || s[t] != 0;
        }
    }
    return packed ? std::make_shared<const IdTensor>(std::move(starts)) : nullptr;
}

namespace {
// The dropout the layer would apply to the probabilities, as the fused op takes it.
ops::AttentionDropout probability_dropout(const Dropout* dropout) {
    if (!dropout || dropout->p == 0.0f || !is_training(dropout->mode)) return {};
    if (!dropout->rng) throw ValueError("Dropout: no generator");
    return {dropout->p, dropout->rng.get()};
}
}  // namespace

Var attention(const Var& q, const Var& k, const Var& v, std::size_t n_head, const ops::SoftmaxMask& mask,
              const Dropout* dropout) {
    if (q.dim() != 3 || k.dim() != 3 || v.shape() != k.shape() || k.shape()[0] != q.shape()[0] ||
        k.shape()[1] < q.shape()[1])
        throw ShapeError("attention: expected q (B, T, C), k and v (B, T', C_kv) with T' ≥ T, got " + remat::to_string(q.shape()) +
                         ", " + remat::to_string(k.shape()) + ", " + remat::to_string(v.shape()));
    return ops::attention(q, k, v, n_head, mask, probability_dropout(dropout));
}

Var self_attention(const Var& qkv, std::size_t n_head, const ops::SoftmaxMask& mask, const Dropout* dropout) {
    return ops::attention(qkv, n_head, mask, probability_dropout(dropout));
}

MultiHeadAttention MultiHeadAttention::create(std::size_t features, std::size_t n_head, Generator& rng, bool causal,
                                              float dropout_p) {
    if (n_head == 0 || features % n_head != 0)
        throw ValueError("MultiHeadAttention: " + std::to_string(features) + " features do not split into " +
                         std::to_string(n_head) + " heads");
    return {Linear::create(features, 3 * features, rng), Linear::create(features, features, rng),
            Dropout::create(dropout_p), n_head, causal};
}

Var MultiHeadAttention::operator()(const Var& x, const Tensor* key_padding) const {
    check_rank("MultiHeadAttention", x, 3, "(B, T, C)");
    Var qkv = REMAT_CALL(in_proj, x);
    Var y = self_attention(qkv, n_head, {.causal = causal, .key_padding = key_padding}, &dropout);
    return REMAT_CALL(out_proj, y);
}

}  // namespace remat::nn
