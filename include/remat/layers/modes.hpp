#pragma once
// Whole-model switches, as Flux's trainmode! / testmode! and Optimisers.jl's freeze! / thaw!.
#include <functional>
#include <string>

#include "remat/layers/layer.hpp"
#include "remat/tree/walk.hpp"

namespace remat::nn {

// Sets every stateful layer's mode (every Mode member, however deeply nested).
template <class Model>
void set_mode(Model& model, Mode mode) {
    tree::visit(model, [&](auto& node, const std::string&) {
        if constexpr (std::is_same_v<tree::bare<decltype(node)>, Mode>) node = mode;
    });
}
template <class Model>
void trainmode(Model& model) { set_mode(model, Mode::train); }
template <class Model>
void testmode(Model& model) { set_mode(model, Mode::test); }
template <class Model>
void automode(Model& model) { set_mode(model, Mode::automatic); }

// Freezes the parameters whose path satisfies `predicate` (all of them without one): they are read
// as constants, get no gradient and no optimiser update.
template <class Model>
void freeze(Model& model, const std::function<bool(const std::string& path)>& predicate = nullptr) {
    tree::visit(model, [&](auto& node, const std::string& path) {
        if constexpr (tree::is_param<decltype(node)>)
            if (!predicate || predicate(path)) node.frozen = true;
    });
}
// Thaws them: trained again, in float32 (a parameter held in bf16 is widened: Param::release_bf16).
template <class Model>
void thaw(Model& model, const std::function<bool(const std::string& path)>& predicate = nullptr) {
    tree::visit(model, [&](auto& node, const std::string& path) {
        if constexpr (tree::is_param<decltype(node)>)
            if (!predicate || predicate(path)) {
                node.release_bf16();
                node.frozen = false;
            }
    });
}

}  // namespace remat::nn
