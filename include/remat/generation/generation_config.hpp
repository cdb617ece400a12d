#pragma once
// A model folder's generation settings as HF's generate() takes them: generation_config.json
// (GenerationConfig) where the folder has one, over config.json's token ids (as
// GenerationConfig.from_model_config).
#include <cstdint>
#include <filesystem>
#include <optional>

#include "remat/generation/generate.hpp"

namespace remat::generation {

struct FolderSettings {
    // do_sample, temperature, top_k, top_p, repetition_penalty and max_new_tokens from the file (else
    // Options' defaults); stop_ids = eos_token_id (a number or a list); pad_id = pad_token_id, else the
    // first stop id, else 0.
    Options options;
    bool has_file = false;              // the folder has a generation_config.json
    bool max_new_tokens_given = false;  // ... which sets max_new_tokens
};

// FormatError naming the file and the field for a malformed file or a field of the wrong type.
FolderSettings read_folder_settings(const std::filesystem::path& dir);

}  // namespace remat::generation
