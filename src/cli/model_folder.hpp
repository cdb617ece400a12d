#pragma once
// Which architecture a HuggingFace model folder holds, from its config.json: model_type "gpt2" or
// "bert", or else the first known name in "architectures".
#include <filesystem>
#include <string>

namespace remat::cli {

enum class Architecture { gpt2_lm_head, bert_masked_lm, bert_base };

// HF's class name: "GPT2LMHeadModel", "BertForMaskedLM", "BertModel".
const char* name(Architecture a);

struct ModelFolder {
    std::filesystem::path dir;
    std::filesystem::path config;  // dir / "config.json"
    Architecture architecture;
};

// Throws Failure naming the folder or config.json: a missing folder, no config.json, invalid JSON,
// an unsupported model_type or architecture. The config's fields are checked later, by the model's
// own Config::from_file.
ModelFolder inspect(const std::filesystem::path& dir);

}  // namespace remat::cli
