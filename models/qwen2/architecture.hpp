#pragma once
// Qwen2ForCausalLM's facts for the architecture table: the Llama family's structs (HF's Qwen2
// modules are Llama's, with q/k/v biases), Qwen2's config.
#include "models/llama/architecture.hpp"
#include "models/qwen2/config.hpp"

namespace remat::qwen2 {

struct ForCausalLM : llama::FamilyFacts<Config> {
    static constexpr const char* model_type = "qwen2";
    static constexpr const char* hf_class = "Qwen2ForCausalLM";
    static constexpr const char* family = "Qwen2";
};

// The table's line (models/architectures.cpp): models::architecture_of<ForCausalLM>(), compiled in architecture.cpp.
models::Architecture causal_lm_entry();

}  // namespace remat::qwen2
