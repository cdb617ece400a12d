#pragma once
// MistralForCausalLM's facts for the architecture table: the Llama family's structs (HF's Mistral
// modules are Llama's), Mistral's config with its sliding window.
#include "models/llama/architecture.hpp"
#include "models/mistral/config.hpp"

namespace remat::mistral {

struct ForCausalLM : llama::FamilyFacts<Config> {
    static constexpr const char* model_type = "mistral";
    static constexpr const char* hf_class = "MistralForCausalLM";
    static constexpr const char* family = "Mistral";
};

// The table's line (models/architectures.cpp): models::architecture_of<ForCausalLM>(), compiled in architecture.cpp.
models::Architecture causal_lm_entry();

}  // namespace remat::mistral
