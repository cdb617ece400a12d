#pragma once
// What train::Trainer trains: a model's parameters, its mode, its loss on a batch and its optimiser.
// Every architecture of the table is one (models::Model); a program's own model implements these
// four to be trained, checkpointed and resumed by the same run.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "remat/ad/var.hpp"
#include "remat/core/param.hpp"
#include "remat/data/dataset.hpp"
#include "remat/train/optimisers.hpp"

namespace remat::train {

// An optimiser bound to one model's parameters.
class Optimiser {
public:
    virtual ~Optimiser() = default;
    // One step, given each parameter's gradient in parameters() order (null: zero).
    virtual void update(std::span<const Tensor* const> grads) = 0;
    // The rate of the next update (a schedule sets it before each, from step()).
    virtual void set_learning_rate(float lr) = 0;
    virtual std::int64_t step() const = 0;  // updates done
    // The state on disk (train/state_file.hpp): the moments, the step and the rule's settings. A
    // sharded state saves its own moments and loads its own from the files of every rank that saved.
    virtual void save_state(const std::filesystem::path& path) const = 0;
    virtual void load_state(std::span<const std::filesystem::path> paths) = 0;
    // Bytes of moments this optimiser holds.
    virtual std::size_t state_bytes() const = 0;
};

class Trainable {
public:
    virtual ~Trainable() = default;
    virtual std::vector<Param*> parameters() = 0;
    virtual void set_training(bool training) = 0;  // nn::trainmode / nn::testmode
    // The mean loss of one micro-batch as a one-element Var, recorded on the current backend.
    virtual Var training_loss(const data::Batch& batch) = 0;
    // torch.optim.AdamW as HF Trainer sets it up: biases and normalisation weights do not decay
    // (train::weight_decay_mask). `owned` (per parameter; empty: all): the share it updates and keeps
    // moments for, as OptimiserState::owned (ZeRO-1).
    virtual std::unique_ptr<Optimiser> trainer_adamw(const AdamW& rule, std::vector<bool> owned) = 0;
    std::unique_ptr<Optimiser> trainer_adamw(const AdamW& rule) { return trainer_adamw(rule, {}); }
};

}  // namespace remat::train
