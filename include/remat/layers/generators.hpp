#pragma once
// Which generator a model's dropouts draw from.
//
// Every Dropout made without a generator shares default_generator() (as in Flux), and a copy of a
// model shares its generators with the original. A Generator is not thread-safe, and even with a lock
// two threads would interleave their draws nondeterministically. What is safe: each thread runs its
// own copy of the model with its own generator —
//
//   auto mine = model;                                             // parameters copied
//   nn::set_rng(mine, std::make_shared<Generator>(Generator(seed).fork(thread_index)));
//
// — and then each thread's results are bitwise those of running the copies one after another
// (the tape is per thread; kernels split work by shape, never by thread count). Reading one model's
// parameters from several threads is safe only while nothing draws (dropout off: testmode or
// ad::NoGrad) and nothing updates (no BatchNorm in training mode, no optimiser step).
#include <memory>
#include <string>

#include "remat/core/error.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/tree/walk.hpp"

namespace remat::nn {

// Points every Dropout in the model (however deeply nested, attention's included) at rng; returns
// how many it set.
template <class Model>
std::size_t set_rng(Model& model, const std::shared_ptr<Generator>& rng) {
    if (!rng) throw ValueError("set_rng: a null generator");
    std::size_t n = 0;
    tree::visit(model, [&](auto& node, const std::string&) {
        if constexpr (std::is_same_v<tree::bare<decltype(node)>, Dropout>) {
            node.rng = rng;
            ++n;
        }
    });
    return n;
}

}  // namespace remat::nn
