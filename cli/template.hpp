#pragma once
// `remat template DIR MESSAGES.json [--generation-prompt]`: a conversation as the model's chat template
// renders it — exactly the text of HF's tokenizer.apply_chat_template(messages, tokenize=False,
// add_generation_prompt=…) — so users can see what a chat model is given.
#include <filesystem>
#include <string>

#include "cli/command.hpp"

namespace remat::cli {

// The conversation in `messages` (a JSON file) as the chat template of the folder `dir` renders it;
// Failure naming the file for JSON that is not a conversation or one the template refuses.
std::string conversation_text(const std::filesystem::path& dir, const std::filesystem::path& messages, bool generation_prompt);

Command add_template_command(CLI::App& remat);

}  // namespace remat::cli
