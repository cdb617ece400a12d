#pragma once
// BERT from a HuggingFace model folder: config.json + model.safetensors (or shards).
#include "models/bert/architecture.hpp"
#include "models/pretrained.hpp"

namespace remat::bert {

// models::from_pretrained<bert::MaskedLM>, under its earlier name: warnings (e.g. the pooler and
// next-sentence head a masked-LM model does not use) go to `report` when given.
inline Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                             std::shared_ptr<Generator> dropout_rng = nullptr) {
    return models::from_pretrained<MaskedLM>(dir, report, std::move(dropout_rng));
}

}  // namespace remat::bert
