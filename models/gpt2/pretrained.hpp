#pragma once
// GPT-2 from a HuggingFace model folder: config.json + model.safetensors (or shards).
#include "models/gpt2/gpt2.hpp"
#include "remat/hf/load.hpp"

namespace remat::gpt2 {

// Builds the model config.json describes and loads its weights; warnings (unused tensors) go to
// `report` when given. Dropouts draw from dropout_rng (the shared default generator when null).
Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                      std::shared_ptr<Generator> dropout_rng = nullptr);

}  // namespace remat::gpt2
