#pragma once
// A model of the architecture table (models::Model, as the commands use it) for tests whose subject is
// not a model's own type: files, loading, saving, planning. They do not instantiate the model's
// structs, so editing a model recompiles its own tests and not theirs.
#include <filesystem>
#include <memory>
#include <string>

#include "models/architecture.hpp"
#include "tests/support/random_tensor.hpp"

namespace remat::test {

inline const models::Architecture& architecture(const std::string& hf_class) {
    const models::Architecture* a = models::find_class(hf_class);
    if (!a) throw ValueError("no architecture " + hf_class + " in the table");
    return *a;
}

// Built from the default config with these sizes, initialised from `seed`, blocks checkpointed by `policy`.
inline std::unique_ptr<models::Model> table_model(const std::string& hf_class, const models::SizeRequest& sizes,
                                                  std::uint64_t seed, const Policy& policy = Policy::none(),
                                                  std::shared_ptr<Generator> dropout = nullptr) {
    const models::Architecture& a = architecture(hf_class);
    Generator init(seed);
    return a.create(a.config_with(sizes), init, std::move(dropout), policy);
}

// Loaded from an HF folder (models::load: every tensor, or hf::LoadError).
inline std::unique_ptr<models::Model> load_table_model(const std::string& hf_class, const std::filesystem::path& dir,
                                                       hf::LoadReport* report = nullptr) {
    return models::load(architecture(hf_class), dir, Policy::none(), nullptr, report);
}

// The model's logits for input_ids alone.
inline Var logits_of(models::Model& model, const IdTensor& ids) { return model.logits({.ids = {{"input_ids", ids}}}); }

// The architecture's own loss of those logits against labels (a causal LM: the ids themselves).
inline Var loss_of(models::Model& model, const IdTensor& ids, const IdTensor& labels) {
    return model.loss(logits_of(model, ids), labels);
}

// Every LoRA adapter's B drawn N(0, std²), seeds first_seed + 1, + 2, … in path order: as after some
// training (with B zero, set_lora's start, the adapters change no logit and A gets no gradient).
inline void randomise_lora_B(models::Model& model, std::uint64_t first_seed, float std) {
    std::uint64_t seed = first_seed;
    for (const auto& named : model.named_parameters())
        if (named.first.ends_with("lora_B.weight")) named.second->value = random_tensor(named.second->shape(), ++seed, std);
}

}  // namespace remat::test
