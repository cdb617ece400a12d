#include "remat/train/micro_batches.hpp"

#include <algorithm>

namespace remat::train {

void MicroBatches::add_to_sum(ad::Tape& tape, std::size_t j) {
    sum_.resize(params_.size());
    has_sum_.resize(params_.size());
    if (j == 0) std::fill(has_sum_.begin(), has_sum_.end(), false);
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const Tensor* g = params_[i]->frozen ? nullptr : tape.grad(params_[i]->value);
        if (!g) continue;  // no contribution from this micro-batch
        Tensor& sum = sum_[i];
        if (!has_sum_[i]) {  // the first G_j that reaches it: copied, so the sum is exactly G_j
            if (sum.shape() != g->shape()) sum = Tensor::from_shape(g->shape());
            std::copy(g->begin(), g->end(), sum.begin());
            has_sum_[i] = true;
        } else {
            float* out = sum.data();
            const float* in = g->data();
            for (std::size_t e = 0; e < sum.size(); ++e) out[e] += in[e];
        }
    }
}

StepGradient MicroBatches::finish(ad::Tape& tape, std::size_t k, const std::vector<float>& losses) {
    StepGradient out;
    double total = 0;
    for (float l : losses) total += l;
    out.loss = static_cast<float>(total / static_cast<double>(k));
    out.losses = losses;
    out.grads.reserve(params_.size());
    for (std::size_t i = 0; i < params_.size(); ++i) {
        if (params_[i]->frozen)
            out.grads.push_back(nullptr);
        else if (k == 1)
            out.grads.push_back(tape.grad(params_[i]->value));
        else
            out.grads.push_back(has_sum_[i] ? &sum_[i] : nullptr);
    }
    return out;
}

}  // namespace remat::train
