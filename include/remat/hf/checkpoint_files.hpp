#pragma once
// Deprecated: the old name of remat/hf/weight_files.hpp. In remat "checkpoint" means gradient
// checkpointing; a model folder's tensors are its weight files.
#include "remat/hf/weight_files.hpp"

namespace remat::hf {

using CheckpointFiles [[deprecated("use hf::WeightFiles from remat/hf/weight_files.hpp")]] = WeightFiles;

}  // namespace remat::hf
