#pragma once
// How a model's tensors are named in HuggingFace checkpoints beyond its own parameter paths: data
// each model declares beside its structs (a static `hf_naming()`), read by hf::load.
#include <string>
#include <vector>

namespace remat::hf {

struct Naming {
    // The base model's prefix ("transformer.", "bert."): a checkpoint may have it or lack it, so a
    // model path transformer.h.0.… loads h.0.… and a base model's h.0.… loads transformer.h.0.….
    std::string base_prefix;
    // Checkpoint tensors tied to a parameter the model already has (the LM head's weight is the
    // word embedding): never loaded, never warned about. Matched as a whole name or a dotted suffix.
    std::vector<std::string> tied;
    // Checkpoint tensors that are not parameters (old attention masks, position ids): ignored
    // silently. Matched as a name suffix (".attn.bias").
    std::vector<std::string> ignored_suffixes;
};

// The naming a model type declares, or none (names are taken as they are).
template <class Model>
Naming naming_of() {
    if constexpr (requires { Model::hf_naming(); })
        return Model::hf_naming();
    else
        return {};
}

}  // namespace remat::hf
