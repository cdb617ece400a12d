#pragma once
// LoRA in the commands (docs/lora.md): `--lora r=16,alpha=32,dropout=0.05,targets=q_proj,v_proj`
// read into a config, an adapter folder in HF PEFT's format put on a loaded base model, and the
// trained adapter written back as PEFT writes one.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/model_folder.hpp"
#include "remat/adapters/peft.hpp"

namespace remat::cli {

// `--lora` text: comma-separated KEY=VALUE items — r, alpha, dropout (PEFT's defaults: 8, 8, 0),
// rslora (true/false), targets (module
// names: this item's value and the items without '=' after it), regex (a pattern matched against
// the whole path: the rest of the text, commas included). Without targets or regex: the
// architecture's PEFT default (GPT-2 c_attn, BERT query,value, the Llama family q_proj,v_proj).
// Failure naming the item.
adapters::LoraConfig parse_lora(const std::string& text, const models::Architecture& architecture);

// The config as --lora text with every key, in one order: what a resumed run compares.
std::string lora_text(const adapters::LoraConfig& config);

// Gives `model` the adapter in `adapter_dir` (adapter_config.json + adapter_model.safetensors): its
// layers adapted as the config says, their matrices from the file. Failure naming the folder for a
// config remat refuses or an adapter that does not fit the model (another base).
adapters::PeftAdapter attach_adapter(models::Model& model, const std::filesystem::path& adapter_dir,
                                     std::shared_ptr<Generator> dropout_rng = nullptr);

// The adapters of `model` into dir, as PEFT's save_pretrained writes them, naming `base` as the
// model they adapt (its folder's absolute path).
void save_adapter(models::Model& model, const adapters::LoraConfig& config, const ModelFolder& base,
                  const std::filesystem::path& dir);

// What a run trains: "LoRA r 16 on 42 layers (q_proj, v_proj): 1228800 of 125668608 parameters trained (0.98 %)".
std::string lora_summary(models::Model& model, const adapters::LoraConfig& config);

}  // namespace remat::cli
