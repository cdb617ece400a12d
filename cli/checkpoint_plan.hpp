#pragma once
// --checkpoint budget:SIZE and auto: the plan for this model and batch (remat/planning/plan.hpp),
// made once the model (and the optimiser, for train) exists.
#include <cstddef>
#include <functional>

#include "models/architecture.hpp"

namespace remat::cli {

// Bytes of the gradients the model's first step will allocate: those the current tape has no buffer for.
std::size_t gradients_to_come(models::Model& model);

// For a request (Policy::needs_planning), profiles the step `loss` computes on the current tape,
// plans, sets the plan on the model and prints one line saying what it chose; returns the plan. Any
// other policy comes back as it is. `reserve`: bytes the command will still allocate besides
// activations and the gradients not yet allocated (which are counted here), e.g. an accumulation
// buffer. `release_held`: for a `loss` that keeps its logits beyond the step (`run` writes them out), lets
// go of them after each profiled pass; the plan counts them where they are alive
// (planning::ProfileOptions). Failure when nothing fits, naming the smallest budget that would.
Policy plan_checkpointing(models::Model& model, const Policy& requested, const std::function<Var()>& loss,
                          std::size_t reserve = 0, const std::function<void()>& release_held = {});

}  // namespace remat::cli
