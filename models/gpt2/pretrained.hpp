#pragma once
// GPT-2 from a HuggingFace model folder: config.json + model.safetensors (or shards).
#include "models/gpt2/architecture.hpp"
#include "models/pretrained.hpp"

namespace remat::gpt2 {

// models::from_pretrained<gpt2::LMHead>, under its earlier name.
inline Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                             std::shared_ptr<Generator> dropout_rng = nullptr) {
    return models::from_pretrained<LMHead>(dir, report, std::move(dropout_rng));
}

}  // namespace remat::gpt2
