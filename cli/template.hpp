#pragma once
// `remat template DIR MESSAGES.json [--generation-prompt]`: a conversation as the model's chat template
// renders it — exactly the text of HF's tokenizer.apply_chat_template(messages, tokenize=False,
// add_generation_prompt=…) — so users can see what a chat model is given.
#include "cli/command.hpp"

namespace remat::cli {

Command add_template_command(CLI::App& remat);

}  // namespace remat::cli
