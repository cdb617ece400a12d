#include "remat/adapters/peft.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "remat/core/in_quotes.hpp"
#include "remat/hf/load.hpp"
#include "remat/hf/safetensors.hpp"
#include "src/core/strict_json.hpp"

namespace remat::adapters {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_adapter_matrix(const std::string& path) {
    return path.ends_with(".lora_A.weight") || path.ends_with(".lora_B.weight");
}

// A float as the shortest decimal that reads back as it (0.05f as 0.05, as Python writes 0.05).
json shortest(float x) {
    if (x == std::floor(x) && std::abs(x) < 1e9f) return static_cast<std::int64_t>(x);
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, x).ptr;
    return std::stod(std::string(text, end));
}

// The problems, one a line, the first ten of them.
std::string listed(const std::vector<std::string>& problems) {
    std::string s;
    for (std::size_t i = 0; i < problems.size() && i < 10; ++i) s += "\n  " + problems[i];
    if (problems.size() > 10) s += "\n  and " + std::to_string(problems.size() - 10) + " more";
    return s;
}

}  // namespace

void save_peft(const std::vector<std::pair<std::string, Param*>>& named_parameters, const LoraConfig& config,
               const PeftInfo& info, const fs::path& dir) {
    config.validate();
    std::vector<hf::NamedTensor> tensors;
    for (const auto& [path, p] : named_parameters)
        if (is_adapter_matrix(path)) tensors.push_back({peft_prefix + path, &p->value, true});
    if (tensors.empty()) throw ValueError("save_peft: the model has no LoRA adapter to save");
    // LoraConfig.save_pretrained's fields as PEFT 0.11–0.13 write them (json.dumps(indent=2, sort_keys=True)).
    json j = json::object();
    j["alpha_pattern"] = json::object();
    j["auto_mapping"] = nullptr;
    j["base_model_name_or_path"] = info.base_model_name_or_path.empty() ? json(nullptr) : json(info.base_model_name_or_path);
    j["bias"] = "none";
    j["fan_in_fan_out"] = info.fan_in_fan_out;
    j["inference_mode"] = true;
    j["init_lora_weights"] = true;
    j["layer_replication"] = nullptr;
    j["layers_pattern"] = nullptr;
    j["layers_to_transform"] = nullptr;
    j["loftq_config"] = json::object();
    j["lora_alpha"] = shortest(config.alpha);
    j["lora_dropout"] = shortest(config.dropout);
    j["megatron_config"] = nullptr;
    j["megatron_core"] = "megatron.core";
    j["modules_to_save"] = nullptr;
    j["peft_type"] = "LORA";
    j["r"] = config.r;
    j["rank_pattern"] = json::object();
    j["revision"] = nullptr;
    j["target_modules"] = !config.target_regex.empty() ? json(config.target_regex)
                          : config.all_linear()   ? json(all_linear_targets)  // PEFT's string, as LoraConfig takes it
                                                  : json(config.target_modules);
    j["task_type"] = info.task_type.empty() ? json(nullptr) : json(info.task_type);
    j["use_dora"] = false;
    j["use_rslora"] = config.rslora;
    hf::save_tensors(tensors, j.dump(2), dir, "adapter_model.safetensors", "adapter_config.json");
}

PeftAdapter read_peft_config(const fs::path& dir) {
    const fs::path path = dir / "adapter_config.json";
    const json j = strict_json::read<json>(path, 1 << 20, "adapter_config.json");
    const std::string where = path.string() + ": ";
    if (!j.is_object()) throw FormatError(where + "not a JSON object");
    auto field = [&](const char* name) -> const json* { return j.contains(name) ? &j[name] : nullptr; };
    auto wrong = [&](const char* name, const char* expected) {
        return FormatError(where + name + " must be " + expected + ", got " + j[name].dump());
    };
    auto unsupported = [&](const std::string& what) {
        return ValueError(where + what + ": remat runs plain LoRA adapters only");
    };

    const json* type = field("peft_type");
    if (!type) throw FormatError(where + "no peft_type: not a PEFT adapter config");
    if (!type->is_string()) throw wrong("peft_type", "a string");
    if (type->get<std::string>() != "LORA")
        throw ValueError(where + "a " + in_quotes(type->get<std::string>()) + " adapter: remat loads LoRA adapters (peft_type \"LORA\")");

    PeftAdapter a;
    const json* r = field("r");
    if (!r || !r->is_number_unsigned() || r->get<std::uint64_t>() == 0 || r->get<std::uint64_t>() > (1u << 20))
        throw FormatError(where + "r must be a positive integer, got " + (r ? r->dump() : "nothing"));
    a.config.r = r->get<std::size_t>();
    const json* alpha = field("lora_alpha");
    if (!alpha || !alpha->is_number()) throw FormatError(where + "lora_alpha must be a number, got " + (alpha ? alpha->dump() : "nothing"));
    a.config.alpha = alpha->get<float>();
    if (const json* d = field("lora_dropout")) {
        if (!d->is_number()) throw wrong("lora_dropout", "a number");
        a.config.dropout = d->get<float>();
    }
    if (const json* rs = field("use_rslora"); rs && !rs->is_null()) {
        if (!rs->is_boolean()) throw wrong("use_rslora", "true or false");
        a.config.rslora = rs->get<bool>();
    }
    const json* targets = field("target_modules");
    if (!targets || targets->is_null()) throw FormatError(where + "no target_modules");
    if (targets->is_string()) {
        if (targets->get<std::string>() == all_linear_targets)
            a.config.target_modules = {all_linear_targets};
        else
            a.config.target_regex = targets->get<std::string>();
    } else if (targets->is_array()) {
        for (const json& t : *targets) {
            if (!t.is_string()) throw wrong("target_modules", "a list of module names or one regular expression");
            a.config.target_modules.push_back(t.get<std::string>());
        }
    } else {
        throw wrong("target_modules", "a list of module names or one regular expression");
    }

    if (const json* b = field("bias"); b && !(b->is_string() && b->get<std::string>() == "none"))
        throw unsupported("bias " + b->dump() + " (trained biases)");
    auto refuse_if = [&](const char* name, bool set, const char* what) {
        if (set) throw unsupported(std::string(what) + " (" + name + " " + j[name].dump() + ")");
    };
    auto present = [&](const char* name) { return field(name) && !j[name].is_null(); };
    auto non_empty = [&](const char* name) { return present(name) && !j[name].empty(); };
    auto is_true = [&](const char* name) { return present(name) && j[name] != json(false); };
    refuse_if("use_dora", is_true("use_dora"), "DoRA");
    refuse_if("modules_to_save", non_empty("modules_to_save"), "fully trained modules beside the adapters");
    refuse_if("rank_pattern", non_empty("rank_pattern"), "ranks by module");
    refuse_if("alpha_pattern", non_empty("alpha_pattern"), "alphas by module");
    refuse_if("layers_to_transform", present("layers_to_transform"), "adapters on some layers only");
    refuse_if("layer_replication", present("layer_replication"), "replicated layers");
    refuse_if("exclude_modules", non_empty("exclude_modules"), "excluded modules");
    refuse_if("lora_bias", is_true("lora_bias"), "a bias on lora_B");
    refuse_if("target_parameters", non_empty("target_parameters"), "adapters on parameters");
    refuse_if("use_qalora", is_true("use_qalora"), "QALoRA");
    refuse_if("trainable_token_indices", non_empty("trainable_token_indices"), "trainable tokens");

    if (const json* base = field("base_model_name_or_path"); base && base->is_string())
        a.info.base_model_name_or_path = base->get<std::string>();
    if (const json* task = field("task_type"); task) a.info.task_type = task->is_string() ? task->get<std::string>() : "";
    if (const json* f = field("fan_in_fan_out"); f && f->is_boolean()) a.info.fan_in_fan_out = f->get<bool>();
    try {
        a.config.validate();
    } catch (const ValueError& e) {
        throw ValueError(where + e.what());
    }
    return a;
}

std::size_t load_peft(const std::vector<std::pair<std::string, Param*>>& named_parameters, const fs::path& dir) {
    const fs::path path = dir / "adapter_model.safetensors";
    const hf::SafetensorsFile file = hf::SafetensorsFile::open(path);
    std::vector<std::string> problems, used;
    std::vector<std::pair<Param*, const hf::TensorInfo*>> fills;
    for (const auto& [module_path, p] : named_parameters) {
        if (!is_adapter_matrix(module_path)) continue;
        const std::string key = peft_prefix + module_path;
        const hf::TensorInfo* t = file.find(key);
        if (!t) {
            problems.push_back("missing " + key);
            continue;
        }
        used.push_back(key);
        if (Shape(t->shape.begin(), t->shape.end()) != p->shape()) {
            problems.push_back(key + ": " + to_string(Shape(t->shape.begin(), t->shape.end())) + " in the file, " +
                               to_string(p->shape()) + " in the model");
            continue;
        }
        fills.emplace_back(p, t);
    }
    std::sort(used.begin(), used.end());
    for (const hf::TensorInfo& t : file.tensors())
        if (!std::binary_search(used.begin(), used.end(), t.name))
            problems.push_back("unexpected " + t.name + " (no such adapter in the model)");
    if (!problems.empty())
        throw hf::LoadError(path.string() + ": " + std::to_string(problems.size()) +
                            (problems.size() == 1 ? " problem" : " problems") +
                            " (an adapter for another base model, or other target modules?):" + listed(problems));
    for (auto& [p, t] : fills) p->value = file.read_float(*t);
    return fills.size();
}

}  // namespace remat::adapters
