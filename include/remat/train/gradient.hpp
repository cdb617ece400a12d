#pragma once
// Flux's withgradient: the loss and the gradient of every trainable parameter, as a tree of the
// model's own type — grads.h[3].attn.c_attn.weight.value is the gradient of model.h[3]...weight.
//
//   auto [loss, grads] = withgradient([&](auto& m) { return ops::mse(m(x), y); }, model);
//
// Frozen parameters and buffers come back as empty tensors.
#include "remat/tree/parameters.hpp"

namespace remat::train {

template <class Model>
struct WithGradient {
    float loss;
    Model grads;
};

template <class F, class Model>
WithGradient<Model> withgradient(F&& loss_fn, Model& model) {
    std::vector<Tensor*> wrt;
    for (Param* p : tree::parameters(model))
        if (!p->frozen) wrt.push_back(&p->value);
    ad::Gradient g = ad::gradient([&] { return loss_fn(model); }, wrt);
    std::size_t next = 0;
    Model grads = tree::map_leaves(model, [&](const auto& leaf) {
        using L = tree::bare<decltype(leaf)>;
        if constexpr (tree::is_param<L>)
            return Param{leaf.frozen ? Tensor(Shape{0}) : std::move(g.grads[next++]), leaf.frozen};
        else if constexpr (tree::is_buffer<L>)
            return Tensor(Shape{0});
        else
            return leaf;
    });
    return {g.loss, std::move(grads)};
}

}  // namespace remat::train
