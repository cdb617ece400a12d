#include "remat/train/micro_batches.hpp"

#include <algorithm>

namespace remat::train {

void MicroBatches::add_to_sum(ad::Tape& tape, std::size_t j) {
    for (std::size_t i = 0; i < params_.size(); ++i) add_to_sum(tape, j, i);
}

void MicroBatches::add_to_sum(ad::Tape& tape, std::size_t j, std::size_t i) {
    sum_.resize(params_.size());
    has_sum_.resize(params_.size());
    if (j == 0) has_sum_[i] = false;
    const Tensor* g = params_[i]->frozen ? nullptr : tape.grad(params_[i]->value);
    Tensor& sum = sum_[i];
    float* out = sum.data();
    if (!g) {  // no contribution from this micro-batch: +0, as data-parallel ranks add for it
        if (has_sum_[i])
            for (std::size_t e = 0; e < sum.size(); ++e) out[e] += 0.0f;
        return;
    }
    const float* in = g->data();
    if (!has_sum_[i]) {  // the first G_j that reaches it; the sum starts at +0, as ranks' sums do
        if (sum.shape() != g->shape()) sum = Tensor::from_shape(g->shape());
        out = sum.data();
        for (std::size_t e = 0; e < sum.size(); ++e) out[e] = 0.0f + in[e];
        has_sum_[i] = true;
    } else {
        for (std::size_t e = 0; e < sum.size(); ++e) out[e] += in[e];
    }
}

Tensor* MicroBatches::step_gradient(ad::Tape& tape, std::size_t k, std::size_t i) {
    if (params_[i]->frozen) return nullptr;
    if (k == 1) return tape.grad(params_[i]->value);
    return has_sum_[i] ? &sum_[i] : nullptr;
}

void MicroBatches::start_watching(ad::Tape& tape, std::size_t j, std::size_t k, const GradientWatch& watch) {
    if (index_.size() != params_.size()) {
        index_.clear();
        for (std::size_t i = 0; i < params_.size(); ++i) index_.emplace(&params_[i]->value, i);
    }
    reported_.assign(params_.size(), false);
    tape.set_backward_hooks({.leaf_final =
                                 [this, &tape, j, k, &watch](const Tensor& leaf) {
                                     const auto it = index_.find(&leaf);
                                     if (it != index_.end() && !params_[it->second]->frozen)
                                         report(tape, j, k, it->second, watch);
                                 },
                             .leaf_final_except_rows =
                                 [this, &tape, k, &watch](const Tensor& leaf, std::span<const std::int64_t> rows) {
                                     // With k > 1 the step gradient is a sum made whole tensors at a time.
                                     const auto it = index_.find(&leaf);
                                     if (k == 1 && watch.final_except_rows && it != index_.end() && !params_[it->second]->frozen)
                                         watch.final_except_rows(it->second, tape.grad(leaf), rows);
                                 },
                             .progress = watch.progress});
}

void MicroBatches::report(ad::Tape& tape, std::size_t j, std::size_t k, std::size_t i, const GradientWatch& watch) {
    if (reported_[i]) return;
    reported_[i] = true;
    if (k > 1) add_to_sum(tape, j, i);
    if (watch.final) watch.final(i, step_gradient(tape, k, i));
}

void MicroBatches::report_the_rest(ad::Tape& tape, std::size_t j, std::size_t k, const GradientWatch& watch) {
    for (std::size_t i = 0; i < params_.size(); ++i)
        if (!params_[i]->frozen) report(tape, j, k, i, watch);
        else if (k > 1) add_to_sum(tape, j, i);
}

StepGradient MicroBatches::finish(ad::Tape& tape, std::size_t k, const std::vector<float>& losses) {
    StepGradient out;
    double total = 0;
    for (float l : losses) total += l;
    out.loss = static_cast<float>(total / static_cast<double>(k));
    out.losses = losses;
    out.grads.reserve(params_.size());
    for (std::size_t i = 0; i < params_.size(); ++i) {
        out.grads.push_back(step_gradient(tape, k, i));
    }
    return out;
}

}  // namespace remat::train
