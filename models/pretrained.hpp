#pragma once
// from_pretrained: a model built from a HuggingFace folder's config.json, with its weights.
//
//   auto model = models::from_pretrained<gpt2::LMHead>("gpt2/");   // a gpt2::Model
//
// Facts is an architecture's facts struct (docs/models.md): its Config type and create().
#include <filesystem>
#include <memory>

#include "remat/core/random.hpp"
#include "remat/hf/load.hpp"

namespace remat::models {

// Builds the model config.json describes and loads its weights (hf::load: every tensor, or
// hf::LoadError listing each problem); warnings (unused tensors) go to `report` when given.
// Dropouts draw from dropout_rng (the shared default generator when null).
template <class Facts>
auto from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                     std::shared_ptr<Generator> dropout_rng = nullptr) {
    const auto config = Facts::Config::from_file(dir / "config.json");
    Generator init(0);  // overwritten by the checkpoint
    auto model = Facts::create(config, init, std::move(dropout_rng));
    hf::LoadReport r = hf::load(model, dir);
    if (report) *report = std::move(r);
    return model;
}

}  // namespace remat::models
