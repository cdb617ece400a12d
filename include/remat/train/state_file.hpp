#pragma once
// An optimiser state on disk, so that a resumed run continues bit for bit:
//
//   train::save_state(state, "run/optimiser.safetensors");
//   auto state = train::setup(train::AdamW{}, model);        // later, or in another process
//   train::load_state(state, "run/optimiser.safetensors");   // rule settings, step, every moment
//
// One safetensors file: each trainable parameter's moments as F32 under "moments.<k>.<parameter path>"
// ("moments.1.layers.0.weight" is Adam's second moment of layers.0.weight), and in its metadata the
// rule's name, the step count and every hyper-parameter (lr included, so a schedule's position is
// kept by the step). Written atomically (a temporary, then rename: a crash never leaves half a file).
// load_state checks everything before changing anything: the rule's name, every setting, every tensor
// present, F32 and of its parameter's shape, and none unknown; it throws hf::FormatError listing each
// problem by tensor name. The model's parameters are not in this file (hf::save writes those).
// A sharded state (ZeRO-1: OptimiserState::owned) writes its own moments only, one file per rank;
// loading takes the files of all ranks and keeps the moments the loading state owns, whatever rank
// count wrote them (or an unsharded file).
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "remat/train/optimisers.hpp"

namespace remat::train {

namespace detail {
template <class Float, class T>
struct StateFields {
    std::string rule;
    std::vector<std::pair<std::string, Float*>> settings;
    std::int64_t step_value;  // written
    std::int64_t* step;       // read into
    std::vector<std::pair<std::string, T*>> tensors;
    // Moments of the model's trainable parameters that another rank keeps (ZeRO-1): the files may
    // hold them, and loading skips them.
    std::vector<std::string> elsewhere;
};
using SavedState = StateFields<const float, const Tensor>;
using LoadedState = StateFields<float, Tensor>;

void write_state_file(const std::filesystem::path& path, const SavedState& state);
// From one file, or from the union of a sharded state's files (one per rank: each tensor in one).
void read_state_files(std::span<const std::filesystem::path> paths, const LoadedState& state);

template <class Fields, class State>
Fields fields_of(State& state) {
    using Rule = std::remove_cvref_t<decltype(state.rule)>;
    Fields f;
    f.rule = Rule::name;
    Rule::settings(state.rule, [&](const char* name, auto& value) { f.settings.emplace_back(name, &value); });
    f.step_value = state.step;
    f.step = nullptr;
    for (std::size_t k = 0; k < Rule::moments; ++k) {
        std::size_t i = 0;
        tree::foreach_parameter(state.moments[k], [&](const std::string& path, auto& p) {
            const std::string name = "moments." + std::to_string(k) + "." + path;
            if (!p.frozen)
                f.tensors.emplace_back(name, &p.value);
            else if (!state.owned.empty() && !state.owned[i])  // another rank's (a frozen one counts as owned)
                f.elsewhere.push_back(name);
            ++i;
        });
    }
    return f;
}
}  // namespace detail

template <class Rule, class Model>
void save_state(const OptimiserState<Rule, Model>& state, const std::filesystem::path& path) {
    detail::write_state_file(path, detail::fields_of<detail::SavedState>(state));
}

// state must come from setup() with the same rule type on a model of the same structure.
template <class Rule, class Model>
void load_state(OptimiserState<Rule, Model>& state, std::span<const std::filesystem::path> paths) {
    auto fields = detail::fields_of<detail::LoadedState>(state);
    fields.step = &state.step;
    detail::read_state_files(paths, fields);
}

template <class Rule, class Model>
void load_state(OptimiserState<Rule, Model>& state, const std::filesystem::path& path) {
    load_state(state, std::span<const std::filesystem::path>(&path, 1));
}

}  // namespace remat::train
