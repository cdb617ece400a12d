#include "cli/lora.hpp"

#include <cstdio>

#include "cli/errors.hpp"
#include "cli/numbers.hpp"
#include "remat/core/error.hpp"
#include "remat/hf/load.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ",") + n;
    return s;
}

}  // namespace

adapters::LoraConfig parse_lora(const std::string& text, const models::Architecture& architecture) {
    adapters::LoraConfig config;
    bool in_targets = false;  // items without '=' continue a targets list
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, comma - at);
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos) {
            if (!in_targets || item.empty())
                throw Failure("--lora: expected KEY=VALUE (r, alpha, dropout, rslora, targets, regex), got \"" + item + "\"");
            config.target_modules.push_back(item);
            at = comma + 1;
            continue;
        }
        const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        in_targets = false;
        if (key == "regex") {  // a pattern may hold commas: it takes the rest
            config.target_regex = text.substr(at + eq + 1);
            if (config.target_regex.empty()) throw Failure("--lora: regex= needs a pattern");
            break;
        }
        if (key == "r")
            config.r = static_cast<std::size_t>(parse_count("--lora r", value, 1));
        else if (key == "alpha")
            config.alpha = parse_number("--lora alpha", value, 0, true);
        else if (key == "dropout")
            config.dropout = parse_number("--lora dropout", value, 0, false);
        else if (key == "rslora") {
            if (value != "true" && value != "false") throw Failure("--lora rslora must be true or false, got \"" + value + "\"");
            config.rslora = value == "true";
        } else if (key == "targets") {
            if (value.empty()) throw Failure("--lora: targets= needs module names (q_proj,v_proj)");
            config.target_modules.push_back(value);
            in_targets = true;
        } else {
            throw Failure("--lora: unknown key \"" + key + "\" (r, alpha, dropout, rslora, targets, regex)");
        }
        at = comma + 1;
    }
    if (config.target_modules.empty() && config.target_regex.empty()) {
        if (architecture.lora_targets.empty())
            throw Failure("--lora: " + architecture.hf_class + " has no default LoRA targets; give targets=NAME,…");
        config.target_modules = architecture.lora_targets;
    }
    try {
        config.validate();
    } catch (const ValueError& e) {
        throw Failure("--lora: " + e.message());
    }
    return config;
}

std::string lora_text(const adapters::LoraConfig& config) {
    std::string text = "r=" + std::to_string(config.r) + ",alpha=" + shortest_text(config.alpha) +
                       ",dropout=" + shortest_text(config.dropout) + ",rslora=" + (config.rslora ? "true" : "false");
    if (!config.target_modules.empty()) text += ",targets=" + joined(config.target_modules);
    if (!config.target_regex.empty()) text += ",regex=" + config.target_regex;
    return text;
}

adapters::PeftAdapter attach_adapter(models::Model& model, const fs::path& adapter_dir, std::shared_ptr<Generator> dropout_rng) {
    std::error_code ec;
    if (!fs::is_directory(adapter_dir, ec)) throw Failure(adapter_dir.string() + ": --adapter: no such folder");
    const adapters::PeftAdapter adapter = adapters::read_peft_config(adapter_dir);
    Generator unused(0);  // A's draw, overwritten by the file's
    try {
        model.set_lora(adapter.config, unused, std::move(dropout_rng));
    } catch (const ValueError& e) {
        throw Failure(adapter_dir.string() + ": " + e.message());
    }
    adapters::load_peft(model.named_parameters(), adapter_dir);
    return adapter;
}

void save_adapter(models::Model& model, const adapters::LoraConfig& config, const ModelFolder& base, const fs::path& dir) {
    const adapters::PeftInfo info{
        .base_model_name_or_path = fs::absolute(base.dir).lexically_normal().string(),
        .task_type = base.architecture->objective == models::Objective::causal_lm ? "CAUSAL_LM" : "",
        .fan_in_fan_out = base.architecture->weights_in_out,
    };
    adapters::save_peft(model.named_parameters(), config, info, dir);
}

std::string lora_summary(models::Model& model, const adapters::LoraConfig& config) {
    std::size_t trained = 0, all = 0, layers = 0;
    for (const auto& [path, p] : model.named_parameters()) {
        all += p->size();
        if (!p->frozen) trained += p->size();
        layers += path.ends_with(".lora_A.weight");
    }
    const std::string targets = config.target_regex.empty() ? joined(config.target_modules) : "regex " + config.target_regex;
    char share[32];
    std::snprintf(share, sizeof share, "%.2f %%", 100.0 * static_cast<double>(trained) / static_cast<double>(all));
    return "LoRA r " + std::to_string(config.r) + " on " + std::to_string(layers) + " layers (" + targets + "): " +
           std::to_string(trained) + " of " + std::to_string(all) + " parameters trained (" + share + ")";
}

}  // namespace remat::cli
