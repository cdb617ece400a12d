#pragma once
// What every layer shares: train/test modes, input checks, and calling a child so that errors
// leaving it carry its path.
#include <string>
#include <utility>

#include "remat/core/error.hpp"
#include "remat/core/param.hpp"
#include "remat/core/random.hpp"

namespace remat::nn {

// Stateful layers (Dropout, BatchNorm) behave as in training or as in inference:
//   train / test: always; automatic: train while the *user* records gradients (outside NoGrad) —
//   never decided by a checkpoint's internal non-recording forward.
enum class Mode { automatic, train, test };
bool is_training(Mode mode);
std::string to_string(Mode mode);

// Calls layer(args...); an error leaving it gets `segment` prepended to its layer path.
// Layers that update state when called (BatchNorm) have a non-const call; containers pass their
// own constness on.
template <class Layer, class... Args>
decltype(auto) call(const std::string& segment, Layer&& layer, Args&&... args) {
    try {
        return std::forward<Layer>(layer)(std::forward<Args>(args)...);
    } catch (Error& e) {
        e.prepend_path(segment);
        throw;
    }
}

// Throws unless x is (…, features) with at least one element; `layer` names the layer for the message.
void check_features(const char* layer, const Var& x, std::size_t features);
// Throws unless x has the given rank.
void check_rank(const char* layer, const Var& x, std::size_t rank, const char* expected);

}  // namespace remat::nn
