#pragma once
// LoRA adapters in HF PEFT's format, so that what remat trains loads with
// PeftModel.from_pretrained(base, "adapter/") and what PEFT trained loads here:
//
//   adapter/adapter_config.json        LoraConfig.save_pretrained's fields (peft_type "LORA", r,
//                                      lora_alpha, lora_dropout, target_modules, use_rslora, …)
//   adapter/adapter_model.safetensors  "base_model.model.<module path>.lora_A.weight" (r, in) and
//                                      "….lora_B.weight" (out, r), float32
//
//   adapters::save_peft(model->named_parameters(), config, {.base_model_name_or_path = "gpt2"}, "adapter");
//   const adapters::PeftAdapter a = adapters::read_peft_config("adapter");   // refuses what remat cannot run
//   model->set_lora(a.config, init);  adapters::load_peft(model->named_parameters(), "adapter");
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "remat/adapters/lora.hpp"
#include "remat/core/param.hpp"

namespace remat::adapters {

// adapter_config.json's fields beside the LoRA settings.
struct PeftInfo {
    std::string base_model_name_or_path{};  // what the adapter was trained on (PEFT writes it; remat reports it)
    std::string task_type = "CAUSAL_LM";     // PEFT's TaskType: CAUSAL_LM, SEQ_CLS, …; "" for none
    bool fan_in_fan_out = false;             // the base stores its weights (in, out): GPT-2's Conv1D
};

struct PeftAdapter {
    LoraConfig config;
    PeftInfo info;
};

// The prefix PEFT's PeftModel puts before a module path in adapter_model.safetensors.
inline constexpr const char* peft_prefix = "base_model.model.";

// Writes both files into dir (created if needed): every parameter whose path ends in lora_A.weight or
// lora_B.weight, under PEFT's name, and the config (keys sorted, indented by 2, as PEFT writes it). Both
// are written under temporary names first: an interrupted save leaves a previous adapter intact.
// ValueError when there is no adapter to save.
void save_peft(const std::vector<std::pair<std::string, Param*>>& named_parameters, const LoraConfig& config,
               const PeftInfo& info, const std::filesystem::path& dir);

// dir/adapter_config.json, checked: hf::FormatError "<path>: <problem>" for a file that is not a PEFT
// LoRA config or a field of the wrong type; ValueError for what remat does not run (DoRA, bias other
// than "none", modules_to_save, rank or alpha patterns, layers_to_transform, another peft_type), each
// named, rather than running something else.
PeftAdapter read_peft_config(const std::filesystem::path& dir);

// Fills the adapters' matrices (set_lora made them, from the same config) from dir/adapter_model.safetensors.
// Every adapter tensor must be in the file with its shape and every LoRA tensor in the file must have
// an adapter: hf::LoadError listing each problem otherwise (an adapter for another base model, or
// targets that differ). Returns the number of tensors loaded.
std::size_t load_peft(const std::vector<std::pair<std::string, Param*>>& named_parameters,
                      const std::filesystem::path& dir);

}  // namespace remat::adapters
