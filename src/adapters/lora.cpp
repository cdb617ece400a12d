#include "remat/adapters/lora.hpp"

#include <cmath>
#include <regex>

#include "remat/ad/backend.hpp"
#include "remat/layers/init.hpp"
#include "remat/ops/linalg.hpp"

namespace remat::adapters {

float LoraConfig::scaling() const {
    const auto rank = static_cast<float>(r);
    return rslora ? alpha / std::sqrt(rank) : alpha / rank;
}

void LoraConfig::validate() const {
    if (r == 0) throw ValueError("LoRA: r must be at least 1");
    if (!std::isfinite(alpha) || alpha <= 0) throw ValueError("LoRA: alpha must be a positive number, got " + std::to_string(alpha));
    if (!(dropout >= 0 && dropout < 1)) throw ValueError("LoRA: dropout must be in [0, 1), got " + std::to_string(dropout));
    if (target_modules.empty() && target_regex.empty())
        throw ValueError("LoRA: no target modules (name the layers to adapt, e.g. q_proj, v_proj)");
    if (!target_modules.empty() && !target_regex.empty())
        throw ValueError("LoRA: give target modules as names or as one regular expression, not both");
    for (const std::string& name : target_modules)
        if (name.empty()) throw ValueError("LoRA: an empty target module name");
    if (!target_regex.empty()) {
        try {
            (void)std::regex(target_regex);
        } catch (const std::regex_error& e) {
            throw ValueError("LoRA: target modules regular expression \"" + target_regex + "\": " + e.what());
        }
    }
}

bool LoraConfig::all_linear() const { return target_modules.size() == 1 && target_modules[0] == adapters::all_linear_targets; }

bool LoraConfig::targets(const std::string& path) const {
    if (!target_regex.empty()) return std::regex_match(path, std::regex(target_regex));
    if (all_linear()) return path != "lm_head" && !path.ends_with(".lm_head");  // the output layer stays as it is
    for (const std::string& name : target_modules)
        if (path == name || (path.size() > name.size() && path.ends_with(name) && path[path.size() - name.size() - 1] == '.'))
            return true;
    return false;
}

namespace detail {

nn::LoRA make_adapter(const LoraConfig& config, std::size_t in, std::size_t out, Generator& init,
                      std::shared_ptr<Generator> dropout_rng) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));  // kaiming_uniform_(a=√5): gain √(1/3) · √(3/in)
    nn::LoRA adapter{{Param{init::uniform(Shape{config.r, in}, -bound, bound, init)}},
                     {Param{zeros(Shape{out, config.r})}},
                     nn::Dropout::create(config.dropout, std::move(dropout_rng)),
                     config.scaling()};
    return adapter;
}

void no_target(const LoraConfig& config, const std::vector<std::string>& linear_paths) {
    std::string targets;
    if (!config.target_regex.empty()) {
        targets = "\"" + config.target_regex + "\"";
    } else {
        for (const std::string& name : config.target_modules) targets += (targets.empty() ? "" : ", ") + name;
    }
    std::string known;
    for (std::size_t i = 0; i < linear_paths.size() && i < 8; ++i) known += (i ? ", " : "") + linear_paths[i];
    if (linear_paths.size() > 8) known += ", …";
    throw ValueError("set_lora: target modules " + targets + " match no linear layer of the model" +
                     (linear_paths.empty() ? std::string(" (it has none)") : " (its linear layers: " + known + ")"));
}

void merge_into(Param& weight, const nn::LoRA& adapter, bool in_out) {
    const ad::NoGrad no_grad;
    // B·A (out, in): B (out, r) times A (r, in), A read as an (in=r, out=in) weight.
    const Tensor delta = ops::linear(leaf(adapter.lora_B.weight), leaf(adapter.lora_A.weight), Var(),
                                     ops::WeightLayout::in_out)
                             .value();
    const std::size_t out = delta.shape()[0], in = delta.shape()[1];
    float* w = weight.value.data();
    const float* d = delta.data();
    for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) {
            float& target = in_out ? w[i * out + o] : w[o * in + i];
            target += adapter.scaling * d[o * in + i];
        }
}

}  // namespace detail

}  // namespace remat::adapters
