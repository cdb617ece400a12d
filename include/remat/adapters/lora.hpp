#pragma once
// LoRA fine-tuning on any model tree, as HF PEFT's get_peft_model(model, LoraConfig(...)) sets it up:
//
//   adapters::LoraConfig config{.r = 16, .alpha = 32, .dropout = 0.05f, .target_modules = {"q_proj", "v_proj"}};
//   adapters::set_lora(model, config, init);   // every parameter frozen, adapters on the targets
//   ... train ...
//   adapters::merge_lora(model);               // W += s·B·A, adapters gone: the plain model again
//
// set_lora is a walk over the tree like set_checkpointing, but it changes values, not types: each
// targeted nn::Linear or nn::Conv1D gets a LoRA adapter in its slot (layers/lora.hpp). So it composes
// with set_checkpointing in either order, and a checkpointed block replays the adapters' dropout like
// any other (docs/lora.md).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "remat/core/random.hpp"
#include "remat/layers/linear.hpp"
#include "remat/layers/modes.hpp"
#include "remat/tree/walk.hpp"

namespace remat::adapters {

// PEFT's LoraConfig, the fields remat supports (others are refused where they are read: peft.hpp).
struct LoraConfig {
    std::size_t r = 8;     // the rank
    float alpha = 8;       // lora_alpha: the update is scaled by alpha / r
    float dropout = 0;     // lora_dropout, on the adapter's input only
    // Module names: a layer is targeted when its path is the name or ends with "." + name (PEFT's rule
    // for a list); {"all-linear"} targets every linear layer but the output layer (lm_head), as PEFT...
    std::vector<std::string> target_modules{};
    // ...or, when this is set instead, when the regular expression matches its whole path (PEFT's rule
    // for a string; ECMAScript syntax, which agrees with Python's re on the patterns PEFT users write).
    std::string target_regex{};
    bool rslora = false;  // use_rslora: scaled by alpha / √r

    float scaling() const;
    // ValueError naming the field: r 0, alpha or dropout out of range, no target or both kinds.
    void validate() const;
    // Whether the layer at `path` is one the config targets.
    bool targets(const std::string& path) const;
    bool all_linear() const;  // target_modules is {"all-linear"}
};

inline constexpr const char* all_linear_targets = "all-linear";  // PEFT's target_modules value

namespace detail {
template <class Layer>
inline constexpr bool adaptable = std::is_same_v<Layer, nn::Linear> || std::is_same_v<Layer, nn::Conv1D>;

// An adapter for a layer of `in` → `out` features: A Kaiming-uniform (a = √5, PEFT's default:
// U(−1/√in, 1/√in)), B zero, so the adapted layer starts as the layer itself.
nn::LoRA make_adapter(const LoraConfig& config, std::size_t in, std::size_t out, Generator& init,
                      std::shared_ptr<Generator> dropout_rng);
// ValueError: the config matched no linear layer (the first few layer paths named, to pick from).
[[noreturn]] void no_target(const LoraConfig& config, const std::vector<std::string>& linear_paths);
// W += s·B·A into a Linear's (out, in) or a Conv1D's (in, out) weight.
void merge_into(Param& weight, const nn::LoRA& adapter, bool in_out);
}  // namespace detail

// Freezes every parameter of `model` (PEFT trains the adapters only), then gives each targeted
// nn::Linear and nn::Conv1D an adapter, A drawn from `init` in tree order. The adapters' dropouts
// draw from dropout_rng (the shared default generator when null) — pass the model's own so that
// train::Trainer keys them with its other dropouts. Returns the number of adapted layers; a config
// that targets none is a ValueError, as is a layer that already has an adapter.
template <class Model>
std::size_t set_lora(Model& model, const LoraConfig& config, Generator& init, std::shared_ptr<Generator> dropout_rng = nullptr) {
    config.validate();
    std::vector<std::string> linear_paths;
    std::size_t adapted = 0;
    nn::freeze(model);  // first: a visit goes on into the adapters it adds
    tree::visit(model, [&](auto& node, const std::string& path) {
        using Node = tree::bare<decltype(node)>;
        if constexpr (detail::adaptable<Node>) {
            linear_paths.push_back(path);
            if (!config.targets(path)) return;
            if (node.adapter) throw ValueError("set_lora: " + path + " already has a LoRA adapter");
            node.adapter = detail::make_adapter(config, node.in_features(), node.out_features(), init, dropout_rng);
            ++adapted;
        }
    });
    if (adapted == 0) detail::no_target(config, linear_paths);
    return adapted;
}

// Holds the weight of every frozen nn::Linear and nn::Conv1D in bf16 only (Param::hold_bf16): the
// frozen base of a LoRA model in half its memory, its products in bf16 — bitwise what the float32
// base gives under Autocast(bf16). Biases, norms and embeddings stay float32. Returns the number of
// weights held.
template <class Model>
std::size_t hold_base_in_bf16(Model& model) {
    std::size_t held = 0;
    tree::visit(model, [&](auto& node, const std::string&) {
        using Node = tree::bare<decltype(node)>;
        if constexpr (detail::adaptable<Node>) {
            if (!node.weight.frozen || node.weight.held_bf16()) return;
            node.weight.hold_bf16();
            ++held;
        }
    });
    return held;
}

// Folds every adapter into its layer's weight (W += s·B·A; PEFT's merge_and_unload), removes the
// adapters and thaws every parameter: the plain model, computing what the adapted one computed (to
// float rounding). A weight held in bf16 is widened to float32 first. Returns the number of adapters
// merged.
template <class Model>
std::size_t merge_lora(Model& model) {
    std::size_t merged = 0;
    tree::visit(model, [&](auto& node, const std::string&) {
        using Node = tree::bare<decltype(node)>;
        if constexpr (detail::adaptable<Node>) {
            node.weight.release_bf16();
            if (!node.adapter) return;
            detail::merge_into(node.weight, *node.adapter, std::is_same_v<Node, nn::Conv1D>);
            node.adapter.reset();
            ++merged;
        }
    });
    nn::thaw(model);
    return merged;
}

}  // namespace remat::adapters
