#pragma once
// Dropout: zeroes each element with probability p in training, scaling the rest by 1/(1 − p);
// the identity in test mode. Draws from `rng`, shared by all dropouts unless given its own.
#include <memory>

#include "remat/layers/layer.hpp"
#include "remat/tree/node.hpp"

namespace remat::nn {

struct Dropout {
    BOOST_HANA_DEFINE_STRUCT(Dropout, (float, p), (Mode, mode), (std::shared_ptr<Generator>, rng));
    static constexpr const char* name = "Dropout";

    // rng defaults to the shared default_generator().
    static Dropout create(float p, std::shared_ptr<Generator> rng = nullptr);
    std::string describe() const;
    // Whether it drops anything now: p > 0 and training (a layer that fuses it, LoRA, asks).
    bool active() const { return p != 0.0f && is_training(mode); }
    Var operator()(const Var& x) const;
};

}  // namespace remat::nn
