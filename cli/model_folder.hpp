#pragma once
// Which architecture a HuggingFace model folder holds, from its config.json, through the table
// (models/architecture.hpp): the commands never name an architecture.
#include <filesystem>
#include <string>

#include "models/architecture.hpp"

namespace remat::cli {

struct ModelFolder {
    std::filesystem::path dir;
    std::filesystem::path config;  // dir / "config.json"
    std::string config_text;
    const models::Architecture* architecture;
};

// Throws naming the folder or config.json: a missing folder, no config.json, invalid JSON, an
// unsupported model_type or architecture, a field the architecture refuses.
ModelFolder inspect(const std::filesystem::path& dir);

// The model of the folder, checkpointed by `policy`, with its weights. Load warnings go to `report`,
// or are printed when it is null.
std::unique_ptr<models::Model> load_model(const ModelFolder& folder, const Policy& policy,
                                          std::shared_ptr<Generator> dropout_rng = nullptr,
                                          hf::LoadReport* report = nullptr);

// Writes `model` as a model folder `to`: an unchanged copy of from's config.json (HF fields remat
// does not read survive), model.safetensors, and from's tokenizer files; every file atomically.
// Returns the names written ("config.json, model.safetensors, vocab.json, …").
std::string save_model_folder(models::Model& model, const ModelFolder& from, const std::filesystem::path& to);

// inspect(dir), which must hold a causal language model: Failure naming `command` otherwise.
ModelFolder causal_lm_folder(const std::filesystem::path& dir, std::string_view command);

// inspect(dir), which must hold a model with a language-model head (causal or masked): Failure
// naming the classes otherwise.
ModelFolder trainable_folder(const std::filesystem::path& dir);

// The families of the causal LMs in the table ("A and B"), for messages.
std::string causal_lm_families();

}  // namespace remat::cli
