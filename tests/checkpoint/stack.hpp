#pragma once
// The model the checkpointing tests share: a stack of pre-LN transformer-like blocks with every kind of
// state a recomputation must replay.
#include <cstdint>
#include <memory>
#include <vector>

#include "remat/checkpoint.hpp"
#include "remat/layers.hpp"
#include "remat/ops.hpp"
#include "remat/tree/parameters.hpp"

namespace remat::test::checkpointing {
constexpr std::size_t C = 8;

// A pre-LN transformer-like block with every stateful kind: attention-probability dropout, residual
// dropout (a private generator in some blocks), BatchNorm in training mode.
template <class Mlp>
struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::LayerNorm, ln), (nn::MultiHeadAttention, attn), (nn::Dropout, drop),
                             (nn::BatchNorm, bn), (Mlp, mlp));
    static constexpr bool is_block = true;
    static constexpr const char* name = "Block";

    Var operator()(const Var& x) {  // (B, T, C)
        const auto B = static_cast<std::int64_t>(x.shape()[0]), T = static_cast<std::int64_t>(x.shape()[1]);
        Var h = x + nn::call("drop", drop, nn::call("attn", attn, nn::call("ln", ln, x)));
        Var flat = nn::call("bn", bn, ops::reshape(h, {B * T, static_cast<std::int64_t>(C)}));
        return h + ops::reshape(nn::call("mlp", mlp, flat), {B, T, static_cast<std::int64_t>(C)});
    }
};
template <class Mlp>
Block(nn::LayerNorm, nn::MultiHeadAttention, nn::Dropout, nn::BatchNorm, Mlp) -> Block<Mlp>;

template <class B>
struct Stack {
    BOOST_HANA_DEFINE_STRUCT(Stack, (nn::Embedding, wte), (std::vector<B>, h), (nn::LayerNorm, ln_f));
    static constexpr const char* name = "Stack";

    // The embedding output feeds block 0 *and* the final residual: a value used inside and outside
    // a checkpointed region.
    Var operator()(const IdTensor& ids) {
        Var e = nn::call("wte", wte, ids);
        Var y = run_blocks(h, "h", e);
        return nn::call("ln_f", ln_f, y + e);
    }
};
template <class B>
Stack(nn::Embedding, std::vector<B>, nn::LayerNorm) -> Stack<B>;

inline auto make_stack(std::uint64_t seed, std::size_t layers, float p, std::shared_ptr<Generator> shared) {
    Generator init(seed);
    using Mlp = nn::Chain<nn::Linear, nn::GeluTanh, nn::Linear>;
    std::vector<Block<Mlp>> h;
    for (std::size_t l = 0; l < layers; ++l) {
        auto attn = nn::MultiHeadAttention::create(C, 2, init, true, p);
        attn.dropout.rng = shared;
        auto own = l % 3 == 2 ? std::make_shared<Generator>(seed * 7 + l) : shared;  // some private generators
        auto up = nn::Linear::create(C, 2 * C, init);  // drawn in order (arguments are not)
        auto down = nn::Linear::create(2 * C, C, init);
        h.push_back({nn::LayerNorm::create(C), std::move(attn), nn::Dropout::create(p, own), nn::BatchNorm::create(C),
                     nn::chain(std::move(up), nn::gelu_tanh, std::move(down))});
    }
    return Stack<Block<Mlp>>{nn::Embedding::create(13, C, init, 0.5f), std::move(h), nn::LayerNorm::create(C)};
}

inline IdTensor random_ids(std::uint64_t seed, std::size_t B = 2, std::size_t T = 5) {
    IdTensor ids = IdTensor::from_shape({B, T});
    Generator g(seed);
    std::vector<std::uint32_t> bits(ids.size());
    g.fill_bits(bits.data(), bits.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = bits[i] % 13;
    return ids;
}

template <class M>
std::vector<const Tensor*> all_tensors(M& model) {
    std::vector<const Tensor*> ts;
    tree::foreach_tensor(model, [&](const std::string&, const Tensor& t) { ts.push_back(&t); });
    return ts;
}

}  // namespace remat::test::checkpointing
