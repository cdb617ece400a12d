#include "cli/checkpoint_plan.hpp"

#include <cstdio>

#include "cli/errors.hpp"
#include "cli/training.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/planning/memory_limit.hpp"
#include "remat/planning/plan.hpp"

namespace remat::cli {

namespace {

// A budget a user can pass back, rounded up: to whole MiB from 64 MiB on, else to whole KiB.
std::string budget_flag(std::size_t bytes) {
    const std::size_t unit = bytes >= (std::size_t{64} << 20) ? std::size_t{1} << 20 : std::size_t{1} << 10;
    return "budget:" + memory_size_text((bytes + unit - 1) / unit * unit);
}

}  // namespace

std::size_t gradients_to_come(models::Model& model) {
    auto* tape = dynamic_cast<ad::Tape*>(&ad::current());
    std::size_t bytes = 0;
    for (Param* p : model.parameters())
        if (!p->frozen && (!tape || !tape->grad(p->value))) bytes += p->size() * sizeof(float);  // a frozen one gets none
    return bytes;
}

Policy plan_checkpointing(models::Model& model, const Policy& requested, const std::function<Var()>& loss,
                          std::size_t reserve, const std::function<void()>& release_held) {
    if (!requested.needs_planning()) return requested;
    planning::ProfileOptions options;
    options.release_held = release_held;
    const planning::Profile profile = model.profile_checkpointing(loss, options);
    std::size_t budget = requested.budget_bytes;
    std::string why = requested.to_string();
    if (requested.kind == Policy::Kind::fit_memory) {
        memory::release_cached();  // profiling's freed blocks are no part of what the process holds
        const planning::MemoryLimit limit = planning::memory_limit();
        const std::size_t reserved = reserve + gradients_to_come(model);
        budget = planning::activation_budget(limit, reserved);
        why = "auto: " + readable_memory_size(budget) + " for activations (limit " + readable_memory_size(limit.limit) + " from " +
              limit.source + ", resident " + readable_memory_size(limit.resident) + ", reserved " + readable_memory_size(reserved) +
              ", margin " + readable_memory_size(planning::memory_margin(limit.limit)) + ")";
    }
    const auto plan = planning::plan_checkpointing(profile, budget);
    if (!plan) {
        const std::size_t least = planning::smallest_budget(profile);
        if (requested.kind == Policy::Kind::fit_memory)
            throw Failure("--checkpoint " + why + ": less than the smallest plan needs, " + readable_memory_size(least) +
                          "; free memory, or lower --batch or --seq");
        throw Failure("--checkpoint " + requested.to_string() + ": no checkpointing plan fits " + readable_memory_size(budget) +
                      " of activations for this model and batch; the smallest that fits is " + readable_memory_size(least) + " (" +
                      budget_flag(least) + ")");
    }
    model.set_policy(*plan);
    const planning::Prediction p = planning::predict(profile, *plan), none = planning::predict(profile, Policy::none());
    std::printf("checkpointing %s: %s (%s), predicted peak activation %s, %.2fx the time of none; profiled in %.1f s\n",
                why.c_str(), plan->to_string().c_str(), planning::describe(profile, plan->plan).c_str(),
                readable_memory_size(p.peak).c_str(), p.seconds / none.seconds, profile.profiling_seconds);
    std::fflush(stdout);
    return *plan;
}

}  // namespace remat::cli
