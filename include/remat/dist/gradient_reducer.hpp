#pragma once
// Sums a step's gradients over the ranks while backward is still running, in buckets (as PyTorch's
// DDP does), with World::sum_in_rank_order's result: every element 0 + g₀ + g₁ + … in rank order,
// the same bits on every rank, whichever order buckets finish in (docs/distributed.md).
//
//   dist::GradientReducer reducer(world, model->parameters());   // on every rank, in the same order
//   train::GradientWatch watch{.final = [&](std::size_t i, Tensor* g) { reducer.ready(i, g); },
//                              .final_except_rows = [&](std::size_t i, Tensor* g, auto rows) {
//                                  reducer.ready_except_rows(i, g, rows); },
//                              .progress = [&] { reducer.progress(); }};
//   train::StepGradient g = micro.run(tape, K, loss, K * world.size(), &watch);
//   g.grads = reducer.finish();                                    // the step's gradient, summed
//
// Buckets hold parameters in reverse order (backward finishes the last layers first), about
// `bucket_bytes` each. A bucket's sum starts once all its gradients are final: each rank sends
// rank s the s-th slice of the bucket, sums the slices it receives in rank order and sends the sum
// back to every rank — point-to-point messages straight from and into the gradient tensors. OpenMPI
// moves data only inside MPI calls, so progress() (called after every op of backward) keeps the sums
// going. A parameter only some ranks have a gradient for counts as zeros on the others; one no rank
// has stays without gradient (nullptr), as in one process.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "remat/core/param.hpp"
#include "remat/dist/world.hpp"

namespace remat::dist {

class GradientReducer {
public:
    // Collective: every rank makes its reducer at the same point with the same parameter shapes
    // (checked: a mismatch ends the job naming it). Frozen parameters take no part. `owners` (ZeRO-1,
    // dist/shards.hpp): per parameter, the one rank that receives its sum (a reduce-scatter); the
    // same on every rank. Empty: every rank receives every sum.
    GradientReducer(const World& world, std::vector<Param*> params, std::size_t bucket_bytes = std::size_t{4} << 20,
                    std::vector<std::size_t> owners = {});
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    // Parameter i's gradient on this rank is final for the step (nullptr: it has none); the tensor
    // must stay put until finish(), which leaves the sum in it. Starts the bucket's sum when this
    // was its last gradient.
    void ready(std::size_t i, Tensor* gradient);
    // Before ready(i, ·): parameter i's gradient is final except at `rows` of its first dimension
    // (train::GradientWatch::final_except_rows — a table whose only uses left are lookups). From the
    // step after every rank was told this for i, i is summed in two parts: the rows no rank has left
    // to look up, once the ranks have exchanged theirs, then the rest at ready(i). Same sums, same
    // bits; `gradient` (null: zeros so far) and its elements must stay put until finish(): those rows
    // are summed where they are.
    void ready_except_rows(std::size_t i, Tensor* gradient, std::span<const std::int64_t> rows);
    // Moves the sums in flight along; cheap when there is nothing to do.
    void progress();
    // Reports parameters not yet ready as having no gradient, waits for every sum and returns the
    // step's gradient, one per parameter (nullptr where no rank had one, and for frozen ones). With
    // owners: the sums of this rank's parameters (zeros where no rank had a gradient), nullptr for
    // the others'.
    std::vector<Tensor*> finish();

    // Buckets of whole parameters; parameters summed in two parts (each in two buckets of its own).
    std::size_t bucket_count() const;
    std::size_t split_count() const;
    // Seconds finish() spent waiting in its last call: the communication backward did not hide.
    double last_wait_seconds() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace remat::dist
