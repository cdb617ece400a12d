#pragma once
// Optimisers in the Optimisers.jl manner: a rule is a small struct; its state mirrors the model.
//
//   auto state = setup(AdamW{.lr = 3e-4f}, model);
//   auto [loss, grads] = withgradient(loss_fn, model);
//   clip_grad_norm(grads, 1.0f);
//   update(state, model, grads);
//
// The state holds one tree of the model's own type per moment the rule keeps (SGD with momentum: 1,
// Adam: 2), so state.moments[0].h[3].attn.c_attn.weight is that parameter's first moment.
// Frozen parameters are skipped. Semantics are PyTorch's (torch.optim.SGD / Adam / AdamW).
#include <array>
#include <cstdint>

#include "remat/tree/parameters.hpp"

namespace remat::train {

// v = momentum·v + g (+ weight_decay·p in g);  p −= lr·v
struct SGD {
    float lr = 0.01f, momentum = 0.0f, weight_decay = 0.0f;
    static constexpr std::size_t moments = 1;
};
// m, v running moments with bias correction;  p −= lr·m̂/(√v̂ + eps);  weight_decay adds to g (L2)
struct Adam {
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
    static constexpr std::size_t moments = 2;
};
// Adam with decoupled weight decay: p ·= 1 − lr·weight_decay first.
struct AdamW {
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
    static constexpr std::size_t moments = 2;
};

template <class Rule, class Model>
struct OptimiserState {
    Rule rule;
    std::array<Model, Rule::moments> moments;
    std::int64_t step = 0;
};

// One rule applied to one parameter's n elements (kernels in src/train/optimisers.cpp).
void apply(const SGD& rule, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n);
void apply(const Adam& rule, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n);
void apply(const AdamW& rule, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n);

template <class Rule, class Model>
OptimiserState<Rule, Model> setup(const Rule& rule, const Model& model) {
    auto zeroed = [&] {
        return tree::map_leaves(model, [](const auto& leaf) {
            using L = tree::bare<decltype(leaf)>;
            if constexpr (tree::is_param<L>)
                return Param{zeros(leaf.shape()), leaf.frozen};
            else if constexpr (tree::is_buffer<L>)
                return Tensor(Shape{0});
            else
                return leaf;
        });
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return OptimiserState<Rule, Model>{rule, {((void)I, zeroed())...}, 0};
    }(std::make_index_sequence<Rule::moments>{});
}

// Applies one step of the rule to every trainable parameter, walking model, grads and moments in
// lockstep (they share one type, so the same traversal order).
template <class Rule, class Model>
void update(OptimiserState<Rule, Model>& state, Model& model, Model& grads) {
    auto params = tree::parameters(model);
    auto gs = tree::parameters(grads);
    std::array<std::vector<Param*>, Rule::moments> ms;
    for (std::size_t k = 0; k < Rule::moments; ++k) ms[k] = tree::parameters(state.moments[k]);
    ++state.step;
    for (std::size_t i = 0; i < params.size(); ++i) {
        Param& p = *params[i];
        if (p.frozen) continue;
        check_shape("update: gradient of parameter " + std::to_string(i), p.shape(), gs[i]->shape());
        std::array<float*, Rule::moments> moment_data;
        for (std::size_t k = 0; k < Rule::moments; ++k) moment_data[k] = ms[k][i]->value.data();
        apply(state.rule, state.step, p.value.data(), gs[i]->value.data(), moment_data.data(), p.size());
    }
}

// Scales all gradients so that their global L2 norm is at most max_norm (as PyTorch's
// clip_grad_norm_); returns the norm before clipping.
template <class Model>
float clip_grad_norm(Model& grads, float max_norm) {
    double total = 0;
    tree::foreach_parameter(grads, [&](const std::string&, const Param& g) {
        for (float v : g.value) total += static_cast<double>(v) * v;
    });
    const auto norm = static_cast<float>(std::sqrt(total));
    const float coef = max_norm / (norm + 1e-6f);
    if (coef < 1.0f)
        tree::foreach_parameter(grads, [&](const std::string&, Param& g) {
            for (float& v : g.value) v *= coef;
        });
    return norm;
}

}  // namespace remat::train
