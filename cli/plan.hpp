#pragma once
// `remat plan DIR --batch B --seq T [--budget SIZE]`: what each checkpointing policy and the planned
// one cost on this model and batch, predicted from a profile and measured where it fits
// (../docs/checkpointing.md).
#include "cli/command.hpp"

namespace remat::cli {

Command add_plan_command(CLI::App& remat);

}  // namespace remat::cli
