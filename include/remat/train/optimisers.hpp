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
// save_state / load_state (train/state_file.hpp) keep a state on disk; schedules (train/schedules.hpp)
// set state.rule.lr from state.step.
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/tree/parameters.hpp"

namespace remat::train {

// v = momentum·v + g (+ weight_decay·p in g);  p −= lr·v
struct SGD {
    float lr = 0.01f, momentum = 0.0f, weight_decay = 0.0f;
    static constexpr std::size_t moments = 1;
    static constexpr const char* name = "SGD";
    // f(name, setting&) for each hyper-parameter: what save_state writes and load_state restores.
    template <class Rule, class F>
    static void settings(Rule& r, F&& f) { f("lr", r.lr); f("momentum", r.momentum); f("weight_decay", r.weight_decay); }
};
// m, v running moments with bias correction;  p −= lr·m̂/(√v̂ + eps);  weight_decay adds to g (L2)
struct Adam {
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
    static constexpr std::size_t moments = 2;
    static constexpr const char* name = "Adam";
    template <class Rule, class F>
    static void settings(Rule& r, F&& f) {
        f("lr", r.lr); f("beta1", r.beta1); f("beta2", r.beta2); f("eps", r.eps); f("weight_decay", r.weight_decay);
    }
};
// Adam with decoupled weight decay: p ·= 1 − lr·weight_decay first.
struct AdamW {
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
    static constexpr std::size_t moments = 2;
    static constexpr const char* name = "AdamW";
    template <class Rule, class F>
    static void settings(Rule& r, F&& f) {
        f("lr", r.lr); f("beta1", r.beta1); f("beta2", r.beta2); f("eps", r.eps); f("weight_decay", r.weight_decay);
    }
};

template <class Rule, class Model>
struct OptimiserState {
    Rule rule;
    std::array<Model, Rule::moments> moments;
    std::int64_t step = 0;
    // Per parameter (tree::parameters order), whether rule.weight_decay applies to it; empty: to
    // every one. train::weight_decay_mask (train/weight_decay.hpp) gives HF Trainer's rule.
    std::vector<bool> decays{};
    // Per parameter, whether this state updates it (ZeRO-1: this rank's share, dist/shards.hpp); the
    // others have no moments, as frozen ones, and update() leaves them. Empty: every one.
    std::vector<bool> owned{};
};

// One rule applied to one parameter's n elements (kernels in src/train/optimisers.cpp).
void apply(const SGD& rule, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n);
void apply(const Adam& rule, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n);
void apply(const AdamW& rule, std::int64_t step, float* p, const float* g, float* const* moments, std::size_t n);

// `owned` (per parameter; empty: all): the share this state updates, as OptimiserState::owned.
template <class Rule, class Model>
OptimiserState<Rule, Model> setup(const Rule& rule, const Model& model, std::vector<bool> owned = {}) {
    std::size_t count = 0;
    tree::foreach_parameter(model, [&](const std::string&, const Param&) { ++count; });
    if (!owned.empty() && owned.size() != count)
        throw ValueError("setup: an ownership mask of " + std::to_string(owned.size()) + " entries for " +
                         std::to_string(count) + " parameters");
    auto zeroed = [&] {
        std::size_t i = 0;  // the parameter's index: map_leaves visits them in tree::parameters order
        return tree::map_leaves(model, [&](const auto& leaf) {
            using L = tree::bare<decltype(leaf)>;
            if constexpr (tree::is_param<L>) {  // a frozen parameter has no moments (LoRA: the whole base), nor another rank's
                const bool mine = owned.empty() || owned[i++];
                return leaf.frozen || !mine ? Param{Tensor(Shape{0}), true} : Param{zeros(leaf.shape())};
            }
            else if constexpr (tree::is_buffer<L>)
                return Tensor(Shape{0});
            else
                return leaf;
        });
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return OptimiserState<Rule, Model>{rule, {((void)I, zeroed())...}, 0, {}, std::move(owned)};
    }(std::make_index_sequence<Rule::moments>{});
}

// Applies one step of the rule to every trainable parameter, given its gradient in
// tree::parameters order (e.g. read off the tape after backward); a null gradient counts as zero.
template <class Rule, class Model>
void update(OptimiserState<Rule, Model>& state, Model& model, std::span<const Tensor* const> grads) {
    auto params = tree::parameters(model);
    if (grads.size() != params.size())
        throw ValueError("update: " + std::to_string(grads.size()) + " gradients for " +
                         std::to_string(params.size()) + " parameters");
    std::array<std::vector<Param*>, Rule::moments> ms;
    for (std::size_t k = 0; k < Rule::moments; ++k) ms[k] = tree::parameters(state.moments[k]);
    if (!state.owned.empty() && state.owned.size() != params.size())
        throw ValueError("update: an ownership mask of " + std::to_string(state.owned.size()) + " entries for " +
                         std::to_string(params.size()) + " parameters");
    if (!state.decays.empty() && state.decays.size() != params.size())
        throw ValueError("update: a weight decay mask of " + std::to_string(state.decays.size()) + " entries for " +
                         std::to_string(params.size()) + " parameters");
    Rule without_decay = state.rule;
    without_decay.weight_decay = 0;
    ++state.step;
    Tensor zero;
    for (std::size_t i = 0; i < params.size(); ++i) {
        Param& p = *params[i];
        if (p.frozen || (!state.owned.empty() && !state.owned[i])) continue;
        if (p.held_bf16())  // unfrozen by hand: no float32 values to update
            throw ValueError("update: parameter " + std::to_string(i) + " is held in bf16; nn::thaw makes it float32 to train");
        const Tensor* g = grads[i];
        if (!g) {
            zero = zeros(p.shape());
            g = &zero;
        }
        check_shape("update: gradient of parameter " + std::to_string(i), p.shape(), g->shape());
        std::array<float*, Rule::moments> moment_data;
        for (std::size_t k = 0; k < Rule::moments; ++k) moment_data[k] = ms[k][i]->value.data();
        const bool decays = state.decays.empty() || state.decays[i];
        apply(decays ? state.rule : without_decay, state.step, p.value.data(), g->data(), moment_data.data(), p.size());
    }
}

// The same with the gradients as a tree of the model's own type (withgradient's result): model,
// grads and moments share one type, so one traversal order.
template <class Rule, class Model>
void update(OptimiserState<Rule, Model>& state, Model& model, Model& grads) {
    std::vector<const Tensor*> gs;
    for (Param* g : tree::parameters(grads)) gs.push_back(&g->value);
    update(state, model, std::span<const Tensor* const>(gs));
}

// Each gradient's sum of squares in double, in order (null: 0): the parts of the global norm. The
// norm adds whole tensors' parts in parameter order, so a sharded run (ZeRO-1), whose ranks each hold
// some tensors' sums, gets the same bits by adding the ranks' parts.
inline std::vector<double> squared_norms(std::span<Tensor* const> grads) {
    std::vector<double> parts(grads.size(), 0.0);
    for (std::size_t i = 0; i < grads.size(); ++i)
        if (grads[i])
            for (float v : *grads[i]) parts[i] += static_cast<double>(v) * v;
    return parts;
}

inline float norm_from_parts(std::span<const double> parts) {
    double total = 0;
    for (double part : parts) total += part;
    return static_cast<float>(std::sqrt(total));
}

// Scales the gradients by max_norm / (norm + 1e-6) when that is below 1, as PyTorch's clip_grad_norm_.
inline void clip_to(std::span<Tensor* const> grads, float norm, float max_norm) {
    const float coef = max_norm / (norm + 1e-6f);
    if (coef < 1.0f)
        for (Tensor* g : grads)
            if (g)
                for (float& v : *g) v *= coef;
}

// Scales all gradients so that their global L2 norm is at most max_norm (as PyTorch's
// clip_grad_norm_); returns the norm before clipping. Null entries are skipped.
inline float clip_grad_norm(std::span<Tensor* const> grads, float max_norm) {
    const float norm = norm_from_parts(squared_norms(grads));
    clip_to(grads, norm, max_norm);
    return norm;
}

template <class Model>
float clip_grad_norm(Model& grads, float max_norm) {
    std::vector<Tensor*> gs;
    for (Param* g : tree::parameters(grads)) gs.push_back(&g->value);
    return clip_grad_norm(std::span<Tensor* const>(gs), max_norm);
}

}  // namespace remat::train
