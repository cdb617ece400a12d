#pragma once
// Checkpointing to a memory budget: for one profiled step (planning/profile.hpp), the plan whose
// predicted peak activation memory fits the budget and whose predicted recomputation time is least.
//
//   planning::Profile profile = planning::profile_checkpointing(model, loss);
//   if (auto plan = planning::plan_checkpointing(profile, parse_memory_size("3GiB")))
//       set_policy(model, *plan);                       // gradients stay bitwise those of `none`
//   else
//       … planning::smallest_budget(profile) is the least that fits
//
// Each block is plain, selective, checkpointed alone, or one of a segment of consecutive blocks
// checkpointed as one region (its input alone kept; the segment recomputed at once in backward). The
// choice is exact for the profile: a dynamic programme over the chain of blocks — the single-level
// case of Griewank's Revolve and of Rotor's chain DP (Herrmann et al. 2019, "Optimal checkpointing for
// heterogeneous chains") — over Pareto fronts of (memory kept, time) after each block, so no budget
// is rounded. docs/checkpointing.md gives the memory model.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "remat/checkpoint.hpp"
#include "remat/planning/profile.hpp"

namespace remat::planning {

struct Prediction {
    std::size_t peak = 0;  // activation bytes above the step's start, as stats.peak_activation_bytes
    double seconds = 0;    // the step's time
};

// What a policy (a fixed one, or a plan) is predicted to cost on the profiled step.
Prediction predict(const Profile& profile, const Policy& policy);
// The same for every block's options as set_policy would set them.
Prediction predict(const Profile& profile, const std::vector<CheckpointOptions>& options);
// Every block's options under a policy, as set_policy sets them on a model of these blocks (the
// profile's paths feed a predicate).
std::vector<CheckpointOptions> options_of(const Profile& profile, const Policy& policy);

// The fastest plan whose predicted peak is at most `budget` bytes; nothing when none fits.
std::optional<Policy> plan_checkpointing(const Profile& profile, std::size_t budget);
// The least budget any plan fits.
std::size_t smallest_budget(const Profile& profile);

// "blocks 0-5 checkpointed, 6-11 plain, 12-23 in 3 segments of 4": a plan for people.
std::string describe(const Profile& profile, const std::vector<CheckpointOptions>& options);

}  // namespace remat::planning
