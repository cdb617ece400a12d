#pragma once
// `remat tokenize DIR [--text FILE | -] [--no-special] [--decode [--skip-special]]`: a text's token ids
// as HuggingFace's tokenizer(text) gives them, or ids back into text, so users can check their data.
#include <filesystem>
#include <optional>

#include "cli/command.hpp"

namespace remat::cli {

struct TokenizeOptions {
    std::filesystem::path dir;                 // a model folder or a tokenizer folder
    std::optional<std::filesystem::path> text; // none or "-": standard input
    bool special = true;                       // encode: the tokenizer's special tokens around the text
    bool decode = false;                       // the input is a JSON array of ids
    bool skip_special = false;                 // decode: leave special tokens out
};

// Encoding prints one JSON array of ids and a newline; decoding prints the text exactly, with no newline
// added. Throws on any problem; returns the exit code.
int tokenize(const TokenizeOptions& options);

Command add_tokenize_command(CLI::App& remat);

}  // namespace remat::cli
