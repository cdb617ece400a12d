#include "remat/layers/attention.hpp"

#include <cmath>

#include "remat/ops/elementwise.hpp"
#include "remat/ops/linalg.hpp"
#include "remat/ops/shape.hpp"

namespace remat::nn {

PaddingMask padding_mask(const IdTensor& attention_mask) {
    Tensor m = empty(Shape(attention_mask.shape().begin(), attention_mask.shape().end()));
    for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = attention_mask.data()[i] != 0 ? 1.0f : 0.0f;
    return std::make_shared<const Tensor>(std::move(m));
}

Var attention(const Var& q, const Var& k, const Var& v, std::size_t n_head, const ops::SoftmaxMask& mask,
              const Dropout* dropout) {
    if (q.dim() != 3 || k.shape() != q.shape() || v.shape() != q.shape())
        throw ShapeError("attention: expected q, k, v of one shape (B, T, C), got " + remat::to_string(q.shape()) + ", " +
                         remat::to_string(k.shape()) + ", " + remat::to_string(v.shape()));
    const std::size_t B = q.shape()[0], T = q.shape()[1], C = q.shape()[2];
    if (n_head == 0 || C % n_head != 0)
        throw ShapeError("attention: " + std::to_string(C) + " features do not split into " + std::to_string(n_head) +
                         " heads");
    const auto H = static_cast<std::int64_t>(n_head), D = static_cast<std::int64_t>(C / n_head);
    const auto b = static_cast<std::int64_t>(B), t = static_cast<std::int64_t>(T);
    auto heads = [&](const Var& x) { return ops::permute(ops::reshape(x, {b, t, H, D}), {0, 2, 1, 3}); };  // (B, H, T, D)
    Var scores = ops::scale(ops::matmul(heads(q), heads(k), false, true), 1.0f / std::sqrt(static_cast<float>(D)));
    Var p = ops::softmax(scores, mask);  // (B, H, T, T)
    if (dropout) p = (*dropout)(p);
    Var y = ops::matmul(p, heads(v));  // (B, H, T, D)
    return ops::reshape(ops::permute(y, {0, 2, 1, 3}), {b, t, static_cast<std::int64_t>(C)});  // (B, T, C)
}

Var self_attention(const Var& qkv, std::size_t n_head, const ops::SoftmaxMask& mask, const Dropout* dropout) {
    if (qkv.dim() != 3 || qkv.shape()[2] % 3 != 0)
        throw ShapeError("attention: expected q, k, v packed as (B, T, 3C), got " + remat::to_string(qkv.shape()));
    const std::size_t C = qkv.shape()[2] / 3;
    auto parts = ops::split_last(qkv, {C, C, C});
    return attention(parts[0], parts[1], parts[2], n_head, mask, dropout);
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
    Var qkv = call("in_proj", in_proj, x);
    Var y = self_attention(qkv, n_head, {.causal = causal, .key_padding = key_padding}, &dropout);
    return call("out_proj", out_proj, y);
}

}  // namespace remat::nn
