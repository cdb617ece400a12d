#pragma once
// What every layer shares: train/test modes, input checks, and calling a child so that errors
// leaving it carry its path.
#include <string>
#include <type_traits>
#include <utility>

#include "remat/core/error.hpp"
#include "remat/ad/backend.hpp"
#include "remat/core/param.hpp"
#include "remat/core/random.hpp"

namespace remat::nn {

// Stateful layers (Dropout, BatchNorm) behave as in training or as in inference:
//   train / test: always; automatic: train while the *user* records gradients (outside NoGrad) —
//   never decided by a checkpoint's internal non-recording forward.
enum class Mode { automatic, train, test };
bool is_training(Mode mode);
std::string to_string(Mode mode);

// Opt-in check that layer inputs are finite, off by default and per thread. While on, every
// nn::call verifies each Var argument before calling the layer and throws ValueError naming the layer
// path, the shape and the first offending element:
//   "h.3.attn: input (2, 8, 16) has NaN at index (0, 3, 5)"
// The first layer whose *input* is not finite is named: the culprit is what fed it. Off, it costs
// one thread-local load per call.
//   { nn::CheckFinite on; model(x); }     // or nn::set_check_finite(true)
inline thread_local bool check_finite_enabled = false;
inline void set_check_finite(bool on) { check_finite_enabled = on; }
class CheckFinite {  // turns the check on (or off) for its scope, then restores the previous setting
public:
    explicit CheckFinite(bool on = true) : previous_(check_finite_enabled) { check_finite_enabled = on; }
    CheckFinite(const CheckFinite&) = delete;
    CheckFinite& operator=(const CheckFinite&) = delete;
    ~CheckFinite() { check_finite_enabled = previous_; }

private:
    bool previous_;
};

namespace detail {
// Throws ValueError "<what> <shape> has NaN at index (…)" (or inf, -inf) unless x is finite.
void check_finite(const char* what, const Var& x);
// Throws ValueError "<layer>: empty batch, <what> <shape>".
[[noreturn]] void empty_batch(const char* layer, const char* what, const Shape& shape);

template <class Layer>
constexpr const char* layer_name() {
    if constexpr (requires { std::remove_cvref_t<Layer>::name; })
        return std::remove_cvref_t<Layer>::name;
    else
        return "layer";
}

// The input of a layer is its first argument: an empty one is an empty batch (later arguments may
// be empty to mean "not given", as an attention mask).
template <class Layer, class First, class... Rest>
void check_input(const First& first, const Rest&...) {
    if constexpr (std::is_same_v<First, Var>) {
        if (first.defined() && first.size() == 0) empty_batch(layer_name<Layer>(), "input", first.shape());
    } else if constexpr (std::is_same_v<First, IdTensor>) {
        if (first.size() == 0) empty_batch(layer_name<Layer>(), "ids", Shape(first.shape().begin(), first.shape().end()));
    }
}
template <class Layer>
void check_input() {}

template <class Arg>
void check_finite_argument(std::size_t& index, const Arg& arg) {
    if constexpr (std::is_same_v<Arg, Var>) {
        if (arg.defined()) {  // an undefined Var is an optional argument not given
            const std::string what = index == 0 ? std::string("input") : "argument " + std::to_string(index + 1);
            check_finite(what.c_str(), arg);
        }
    }
    ++index;
}
}  // namespace detail

// Calls layer(args...); an error leaving it gets `segment` prepended to its layer path. An empty first
// argument (Var or ids) is refused as an empty batch; with CheckFinite on, Var arguments must be finite.
// Layers that update state when called (BatchNorm) have a non-const call; containers pass their
// own constness on.
template <class Layer, class... Args>
decltype(auto) call(const std::string& segment, Layer&& layer, Args&&... args) {
    try {
        detail::check_input<Layer, std::remove_cvref_t<Args>...>(args...);
        if (check_finite_enabled) {
            std::size_t index = 0;
            (detail::check_finite_argument(index, args), ...);
        }
        return std::forward<Layer>(layer)(std::forward<Args>(args)...);
    } catch (Error& e) {
        e.prepend_path(segment);
        throw;
    }
}

// Calls the member `child` of the layer being run through nn::call with the member's own name as the
// path segment, so the name is written once: REMAT_CALL(c_attn, x) is nn::call("c_attn", c_attn, x).
// A dotted member gives a dotted segment: REMAT_CALL(cls.predictions, h) adds "cls.predictions",
// which is what the parameters are named too. Use nn::call for anything else (an element of a
// vector, a layer under another name).
#define REMAT_CALL(child, ...) ::remat::nn::call(#child, child __VA_OPT__(, ) __VA_ARGS__)

// Throws unless x is (…, features) with at least one element; `layer` names the layer for the message.
void check_features(const char* layer, const Var& x, std::size_t features);
// Throws unless x has the given rank.
void check_rank(const char* layer, const Var& x, std::size_t rank, const char* expected);

}  // namespace remat::nn
