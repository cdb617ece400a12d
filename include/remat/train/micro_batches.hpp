#pragma once
// One optimiser step's gradient over K micro-batches (gradient accumulation):
//
//   train::MicroBatches micro(model->parameters());
//   train::StepGradient g = micro.run(tape, K, [&](std::size_t j) {
//       return model->loss(model->logits({.input_ids = batch[j]}), batch[j]);  // j's mean loss
//   });
//   train::clip_grad_norm(std::span<Tensor* const>(g.grads), 1.0f);  // a span: a vector is taken for a tree
//   optimiser->update(g.grads);
//
// The gradient is defined as G = +0 + G_0 + G_1 + … + G_{K−1}, added in micro-batch order, where G_j
// is micro-batch j's complete gradient of (its mean loss)/K, computed into zeroed buffers (+0 where
// micro-batch j gives a parameter no gradient). That makes it a pure function of the micro-batches,
// whatever computed each G_j: data-parallel ranks summing their G_j in rank order give the same bits. With K = 1 it is the plain step's gradient, bit for bit (no
// scaling, no copy). Compared with one batch of B·K windows it agrees to float rounding only: the
// mean is taken in pieces. For K > 1 the sum needs one gradient-sized buffer of its own.
#include <cstddef>
#include <functional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/ad/var.hpp"
#include "remat/ops/elementwise.hpp"

namespace remat::train {

struct StepGradient {
    // The micro-batches' mean losses averaged (in double, rounded once): the step's loss.
    float loss = 0;
    // Each micro-batch's mean loss, in order.
    std::vector<float> losses;
    // One per parameter, in the order given to MicroBatches; null for a frozen parameter or one
    // the loss does not reach. Valid until the next run() or the tape's next zero_grad().
    std::vector<Tensor*> grads;
};

// Watches the step's last backward, which makes each parameter's step gradient final one after the
// other: data parallel starts summing those across processes while backward goes on
// (dist::GradientReducer, docs/distributed.md).
struct GradientWatch {
    // Parameter i's step gradient here (G_0 + G_1 + … of this process's micro-batches) is final;
    // nullptr: it has none. Once per parameter and step, frozen ones excepted, in the order backward
    // finishes them (those it never reaches after it returns, in parameter order).
    std::function<void(std::size_t param, Tensor* gradient)> final;
    // Before final(): every row of parameter i's step gradient but `rows` (sorted, distinct; of its
    // first dimension) is final — all backward has left for it are row lookups (a tied embedding
    // after the output layer). Told only for a step of one micro-batch here; `gradient` may be null
    // (zeros so far) and need not be the tensor final() later gives.
    std::function<void(std::size_t param, Tensor* gradient, std::span<const std::int64_t> rows)> final_except_rows;
    // Called after every recorded op's backward: a chance to move data while backward runs.
    std::function<void()> progress;
};

class MicroBatches {
public:
    explicit MicroBatches(std::vector<Param*> params) : params_(std::move(params)) {}

    // loss(j) records micro-batch j's mean loss on `tape` (made the current backend here) and
    // returns it as a one-element Var. `mean_over` is how many micro-batches the step's mean loss
    // averages, k unless other processes compute the rest (data parallel: k per rank, N·k in all);
    // each G_j is the gradient of (its mean loss)/mean_over. `watch`, if given, is told as each
    // parameter's step gradient becomes final; the gradient is the same either way.
    template <class Loss>
    StepGradient run(ad::Tape& tape, std::size_t k, Loss&& loss, std::size_t mean_over = 0,
                     const GradientWatch* watch = nullptr) {
        ad::UseBackend use(tape);
        if (mean_over == 0) mean_over = k;
        std::vector<float> losses;
        for (std::size_t j = 0; j < k; ++j) {
            tape.zero_grad();  // G_j into zeroed buffers
            const bool watched = watch && j + 1 == k;
            {
                Var l = loss(j);
                losses.push_back(l.item());
                if (watched) start_watching(tape, j, k, *watch);
                const StopWatching stop{watched ? &tape : nullptr};
                tape.backward(mean_over == 1 ? l : l * (1.0f / static_cast<float>(mean_over)));
            }
            if (watched)
                report_the_rest(tape, j, k, *watch);
            else if (k > 1)
                add_to_sum(tape, j);
        }
        return finish(tape, k, losses);
    }

private:
    // Takes the watch's hooks off the tape when the watched backward ends, normally or not.
    struct StopWatching {
        ad::Tape* tape;
        ~StopWatching() {
            if (tape) tape->set_backward_hooks({});
        }
    };

    void add_to_sum(ad::Tape& tape, std::size_t j);  // sum_ = +0 + G_0 when j = 0, else sum_ += G_j
    void add_to_sum(ad::Tape& tape, std::size_t j, std::size_t param);
    Tensor* step_gradient(ad::Tape& tape, std::size_t k, std::size_t param);
    void start_watching(ad::Tape& tape, std::size_t j, std::size_t k, const GradientWatch& watch);
    void report(ad::Tape& tape, std::size_t j, std::size_t k, std::size_t param, const GradientWatch& watch);
    void report_the_rest(ad::Tape& tape, std::size_t j, std::size_t k, const GradientWatch& watch);
    StepGradient finish(ad::Tape& tape, std::size_t k, const std::vector<float>& losses);

    std::vector<Param*> params_;
    std::unordered_map<const Tensor*, std::size_t> index_;  // a parameter's tensor → its index
    std::vector<bool> reported_;  // watching: whose step gradient was reported
    std::vector<Tensor> sum_;     // K > 1: one buffer per parameter (empty: no gradient yet)
    std::vector<bool> has_sum_;   // whether sum_[i] holds a gradient this step
};

}  // namespace remat::train
