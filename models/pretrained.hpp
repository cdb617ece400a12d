#pragma once
// from_pretrained: a model built from a HuggingFace folder's config.json, with its weights.
//
//   auto model = models::from_pretrained<gpt2::LMHead>("gpt2/");   // a gpt2::Model
//
// Facts is an architecture's facts struct (docs/models.md): its Config type and create().
//
// A model that keeps its config (PyTorch's model.config), without a member added to any model struct
// (which would change its reflection and paths):
//
//   auto gpt = models::from_pretrained_with_config<gpt2::LMHead>("gpt2/");   // .model, .config
//   gpt.model(ids);  gpt.config.n_layer;  models::save_pretrained(gpt, "out/");
#include <filesystem>
#include <memory>

#include "remat/core/random.hpp"
#include "remat/hf/load.hpp"
#include "models/build_limit.hpp"

namespace remat::models {

// Builds the model config.json describes and loads its weights (hf::load: every tensor, or
// hf::LoadError listing each problem); warnings (unused tensors) go to `report` when given.
// Dropouts draw from dropout_rng (the shared default generator when null).
template <class Facts>
auto from_pretrained(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                     std::shared_ptr<Generator> dropout_rng = nullptr) {
    const auto config = Facts::Config::from_file(dir / "config.json");
    // The checkpoint's header bounds what building may allocate (models/build_limit.hpp).
    const hf::WeightFiles files = hf::WeightFiles::open(dir);
    std::array<std::string, 5> fields;
    for (std::size_t i = 0; i < fields.size(); ++i) fields[i] = Facts::size_fields[i];
    Generator init(0);  // overwritten by the checkpoint
    auto model = build_within(files, (dir / "config.json").string(), sizes_text(fields, Facts::summary(config).sizes),
                              [&] { return Facts::create(config, init, std::move(dropout_rng)); });
    hf::LoadReport r = hf::load(model, dir);
    if (report) *report = std::move(r);
    return model;
}

// A model with the config it was built from. A plain pair, not a tree node: walks, loading and
// checkpointing take .model.
template <class Model, class Config>
struct Configured {
    Model model;
    Config config;
};

template <class Facts>
auto create_with_config(const typename Facts::Config& config, Generator& init,
                        std::shared_ptr<Generator> dropout_rng = nullptr) {
    using Model = decltype(Facts::create(config, init, std::move(dropout_rng)));
    return Configured<Model, typename Facts::Config>{Facts::create(config, init, std::move(dropout_rng)), config};
}

template <class Facts>
auto from_pretrained_with_config(const std::filesystem::path& dir, hf::LoadReport* report = nullptr,
                                 std::shared_ptr<Generator> dropout_rng = nullptr) {
    auto config = Facts::Config::from_file(dir / "config.json");
    auto model = from_pretrained<Facts>(dir, report, std::move(dropout_rng));
    return Configured<decltype(model), typename Facts::Config>{std::move(model), std::move(config)};
}

// config.json and the weights, into dir (hf::save: atomic per file).
template <class Model, class Config>
void save_pretrained(Configured<Model, Config>& m, const std::filesystem::path& dir) {
    hf::save(m.model, m.config.to_json(), dir);
}

}  // namespace remat::models
