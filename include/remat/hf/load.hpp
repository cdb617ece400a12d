#pragma once
// hf::load and hf::save: a model's parameters (and buffers) by their paths, which are HuggingFace's
// names, from and to a model folder.
//
//   auto report = hf::load(model, "gpt2/");   // fills every parameter; throws LoadError listing
//                                             // every missing or mis-shaped tensor
//   for (auto& w : report.warnings) std::cerr << "warning: " << w << "\n";
//   hf::save(model, config.to_json(), "out/");
//
// What a model's checkpoints may call its tensors besides their paths comes from the model type's
// own hf::Naming (remat/hf/naming.hpp): its base-model prefix is accepted either way (a GPT-2
// checkpoint saved as h.0.… loads into transformer.h.0.…; bert.… into a BertModel), its tied
// weights (lm_head.weight) and known non-parameter buffers (attn.bias) are skipped. Nothing is ever
// transposed or zero-filled silently.
#include <filesystem>
#include <string>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/hf/weight_files.hpp"
#include "remat/hf/naming.hpp"
#include "remat/tree/parameters.hpp"

namespace remat::hf {

// Missing or mis-shaped tensors, all listed.
struct LoadError : FormatError {
    using FormatError::FormatError;
};

struct LoadReport {
    std::vector<std::string> warnings;  // e.g. tensors in the checkpoint the model does not use
    std::size_t loaded = 0;             // tensors filled
};

// A model tensor to fill or save, by its path.
struct NamedTensor {
    std::string path;
    Tensor* tensor;
    bool parameter;  // false: a buffer
};

LoadReport load_tensors(const std::vector<NamedTensor>& targets, const WeightFiles& files,
                        const Naming& naming = {});
void save_tensors(const std::vector<NamedTensor>& tensors, const std::string& config_json,
                  const std::filesystem::path& dir);
// The same pair of files under other names in dir (PEFT's adapter_model.safetensors and
// adapter_config.json): both written and synced under temporary names before either is renamed.
void save_tensors(const std::vector<NamedTensor>& tensors, const std::string& config_json,
                  const std::filesystem::path& dir, const std::string& weights_name, const std::string& config_name);

template <class Model>
std::vector<NamedTensor> named_tensors(Model& model) {
    std::vector<NamedTensor> out;
    tree::visit(model, [&](auto& node, const std::string& path) {
        if constexpr (tree::is_param<decltype(node)>) {
            if (node.held_bf16())  // its float32 tensor is empty: loading or saving it would be wrong
                throw ValueError(path + " is held in bf16 (Param::hold_bf16): release_bf16() before loading or saving it");
            out.push_back({path, &node.value, true});
        }
        else if constexpr (tree::is_buffer<decltype(node)>)
            out.push_back({path, &node, false});
    });
    return out;
}

template <class Model>
LoadReport load(Model& model, const std::filesystem::path& dir) {
    return load_tensors(named_tensors(model), WeightFiles::open(dir), naming_of<Model>());
}

// Writes text (or any bytes) to path atomically: a temporary in the same folder, then rename; on
// failure (FormatError) a previous file at path is untouched.
void write_text_atomically(const std::filesystem::path& path, const std::string& text);

// Writes dir/config.json and dir/model.safetensors, each atomically (temporary, then rename); an
// interrupted save leaves previous files intact. Creates dir if needed.
template <class Model>
void save(Model& model, const std::string& config_json, const std::filesystem::path& dir) {
    save_tensors(named_tensors(model), config_json, dir);
}

}  // namespace remat::hf
