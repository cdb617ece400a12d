#pragma once
// `remat merge DIR ADIR OUT`: a LoRA adapter folded into its base model (W += s·B·A, PEFT's
// merge_and_unload), written as a plain HF model folder (docs/lora.md).
#include "cli/command.hpp"

namespace remat::cli {

Command add_merge_command(CLI::App& remat);

}  // namespace remat::cli
