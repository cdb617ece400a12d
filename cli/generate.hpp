#pragma once
// `remat generate DIR --prompt TEXT | --prompt-file F [...]`: text from a causal LM, streamed as it comes.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace remat::cli {

struct GenerateOptions {
    std::filesystem::path dir;
    std::optional<std::string> prompt;
    std::optional<std::filesystem::path> prompt_file;
    // A conversation (JSON, as `remat template` reads it), rendered by the folder's chat template with
    // the generation prompt and tokenised without adding special tokens, as apply_chat_template does.
    std::optional<std::filesystem::path> chat;
    // Unset: the folder's generation_config.json, else generation::Options' defaults (greedy).
    std::optional<std::size_t> max_new_tokens, top_k;
    std::optional<double> temperature, top_p, repetition_penalty;  // temperature 0: greedy
    std::vector<std::string> stop;                                  // texts that end the generation
    std::optional<std::uint64_t> seed;
    bool json = false;
    std::optional<std::filesystem::path> adapter;  // a LoRA adapter (HF PEFT's folder) on the model
};

// Streams the text to stdout and the counts and speed to stderr, or prints one JSON object with
// --json. Throws on any problem; returns the exit code.
int generate(const GenerateOptions& options);

Command add_generate_command(CLI::App& remat);

}  // namespace remat::cli
