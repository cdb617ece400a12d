#pragma once
// BERT from a HuggingFace model folder: config.json + model.safetensors (or shards).
#include "models/bert/bert.hpp"
#include "remat/hf/load.hpp"

namespace remat::bert {

// BertForMaskedLM as config.json describes it, with its weights; warnings (e.g. the pooler and
// next-sentence head a masked-LM model does not use) go to `report` when given.
Model from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                      std::shared_ptr<Generator> dropout_rng = nullptr);

}  // namespace remat::bert
