#pragma once
// A whole training run, as HF's Trainer runs one: epochs over a dataset in an order drawn from the
// seed, gradient accumulation, a learning-rate schedule, AdamW with clipping, validation, checkpoint
// folders every N steps that a resumed run continues from bit for bit, and data parallelism under
// mpirun. `remat train` is its flags; docs/training.md ("The trainer in C++") shows a run in a few lines:
//
//   train::Trainer trainer(*model, windows, {.steps = 100, .adamw = {.lr = 1e-3f}, .save = "out", .save_every = 50,
//                                            .save_model = [&](const fs::path& dir) { model->save(config, dir); }});
//   if (auto latest = train::latest_run_folder("out")) trainer.resume(*latest);  // the model loaded from it
//   train::RunSummary done = trainer.run();
//
// Bitwise promises (docs/training.md): a resumed run is the uninterrupted run; K micro-batches of B
// are N ranks × K/N; every checkpointing policy gives the same bits.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/core/error.hpp"
#include "remat/core/random.hpp"
#include "remat/data/dataset.hpp"
#include "remat/ops/precision.hpp"
#include "remat/train/run_folders.hpp"
#include "remat/train/run_state.hpp"
#include "remat/train/trainable.hpp"

namespace remat::dist {
class World;
}

namespace remat::train {

// What one optimiser step did (the `remat train --log` line's fields).
struct StepReport {
    std::int64_t step = 0, total = 0;
    double epoch = 0;  // epochs done, fractional
    std::uint64_t tokens = 0;  // trained on so far
    float loss = 0, lr = 0, grad_norm = 0;  // the norm before clipping
    double seconds = 0;  // the step's forward, backward, communication and update, its data included
    double tokens_per_second = 0;
    std::size_t peak_activation_bytes = 0;  // live bytes above the step's start
    std::optional<double> valid_loss{};  // where validation ran after this step
    std::optional<double> communication_seconds{};  // data parallel: the sums over ranks backward did not hide
};

struct TrainerOptions {
    // Optimiser steps of the whole run: E epochs are E · data.size() / (batch · accumulate · ranks).
    std::int64_t steps = 1;
    std::size_t batch = 8;  // examples per micro-batch
    std::size_t accumulate = 1;  // micro-batches per step (per rank)
    AdamW adamw{.lr = 5e-5f};  // torch.optim.AdamW, HF Trainer's decay rule (Trainable::trainer_adamw)
    // The rate of the update after k steps; null: adamw.lr throughout.
    std::function<float(std::int64_t k)> schedule{};
    float clip = 1;  // global gradient norm; 0: none
    std::uint64_t seed = 0;  // the examples' order, a batch's randomness, dropout
    // The model's dropout generator: before each micro-batch it becomes Generator(seed).fork(step).fork(j).
    std::shared_ptr<Generator> dropout{};
    Precision precision = Precision::fp32;  // of forward and backward (and validation)

    const data::Dataset* valid = nullptr;  // validated on its first valid_examples (0: all)
    std::uint64_t valid_examples = 0;
    std::int64_t validate_every = 0;  // steps; 0: only at the end

    std::optional<std::filesystem::path> save{};  // OUT: OUT/checkpoint-STEP folders
    std::int64_t save_every = 0;  // 0: only when stopped
    std::size_t keep = 0;  // checkpoint folders kept; 0: all
    // Writes the model's own files into a checkpoint folder (required with `save`).
    std::function<void(const std::filesystem::path& folder)> save_model{};

    // What decides the run's bits, by name ("--lr" → "0.001"): saved in each checkpoint, and compared
    // on resume (ResumeMismatch for a difference) and, under data parallelism, across ranks (RanksDiffer).
    std::vector<std::pair<std::string, std::string>> arguments{};
    // Arguments added since runs were first saved, with the value a saved run without one ran with.
    std::vector<std::pair<std::string, std::string>> added_arguments{};

    const dist::World* world = nullptr;  // data parallel over its ranks; null: this process alone
    bool sum_during_backward = true;  // ranks sum gradient buckets while backward runs (else after it)
    std::size_t bucket_bytes = std::size_t{4} << 20;  // 4MiB: over a network, smaller than DDP's 25MiB hides more (distributed.md)
    // ZeRO-1 (dist/shards.hpp): each rank keeps the optimiser state of its share of the parameters,
    // receives only their summed gradients, updates them and sends them to the others. The same bits
    // as without; checkpoints hold one optimiser file per rank, which any rank count resumes.
    bool shard_optimizer = false;

    std::function<void(const StepReport&)> on_step{};  // after each step (and its validation)
    // Polled before each step: a signal number stops the run there (SIGINT: 2); 0 goes on.
    std::function<int()> stop_requested{};
};

// The loss or the gradient norm of a step was not finite: "step 7: the loss is nan". The run stops
// before updating; last_batch() is the micro-batch it last computed.
struct Diverged : ValueError {
    Diverged(std::string message, bool loss) : ValueError(std::move(message)), in_loss(loss) {}
    bool in_loss;  // the loss itself (else the gradient norm)
};
// A resumed run's argument differs from the saved one's: "--lr 0.001 differs from the run being
// resumed (0.003 in out/checkpoint-8)".
struct ResumeMismatch : ValueError {
    using ValueError::ValueError;
};
// Data parallel ranks were given different arguments (TrainerOptions::arguments): "rank 1 was started
// with --lr 0.002, rank 0 with --lr 0.001: …". Thrown on every rank, before the first step.
struct RanksDiffer : ValueError {
    using ValueError::ValueError;
};

struct RunSummary {
    std::int64_t first_step = 0, last_step = 0;  // steps done before this run(), and after
    float first_loss = 0, last_loss = 0;  // of this run()'s first and last step
    std::optional<double> valid_loss{};  // the last validation's
    double seconds = 0;  // the steps', their data included
    // The loop's own time: making batches (within `seconds`) and the reports after the steps
    // (on_step; validation and saves are not counted).
    double data_seconds = 0, report_seconds = 0;
    std::uint64_t tokens = 0;  // trained on by this run()
    int stopped_by = 0;  // the signal that stopped the run; 0: it ran to the end
    std::optional<std::filesystem::path> saved{};  // the checkpoint folder written on stopping
    std::vector<std::size_t> optimiser_bytes{};  // the optimiser state each rank holds, in rank order
};

class Trainer {
public:
    // Sets `model` training and makes its optimiser. ValueError for options that cannot run.
    Trainer(Trainable& model, const data::Dataset& data, TrainerOptions options);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    // Continues from a checkpoint folder: the optimiser state and where the run stands. The model's
    // weights are the caller's to load from the same folder (models::load(…, folder, …)).
    // ResumeMismatch when the folder's run had other arguments; FormatError for a damaged folder.
    void resume(const std::filesystem::path& folder);

    // Trains until options.steps, or until stop_requested says a signal came (then saves a
    // checkpoint if `save`). Diverged for a non-finite loss or norm (no checkpoint written).
    RunSummary run();

    // Mean loss over the validation examples, in order, in test mode without recording.
    double validate();
    // Writes OUT/checkpoint-STEP for the current step (rank 0; the others have the same state, but
    // for a sharded optimiser's, which each rank writes into the folder: then every rank calls it).
    std::filesystem::path save_checkpoint();

    // The next step's first micro-batch, the run's position untouched (to plan checkpointing on).
    data::Batch next_batch() const;
    // The latest micro-batch trained on (to find where a non-finite value appeared).
    const data::Batch& last_batch() const { return last_batch_; }
    ad::Tape& tape() { return tape_; }  // the run's: gradients and a plan's profile live here
    const RunState& state() const { return state_; }
    Optimiser& optimiser() { return *optimiser_; }

private:
    struct Stream;
    void gather_parameters();  // ZeRO-1: each parameter from the rank that updated it

    Trainable& model_;
    const data::Dataset& data_;
    TrainerOptions o_;
    std::size_t ranks_ = 1, rank_ = 0;
    std::vector<std::size_t> owners_;  // per parameter, the rank that updates it (ZeRO-1); empty: every rank
    std::unique_ptr<Optimiser> optimiser_;
    std::vector<std::size_t> optimiser_bytes_;  // per rank
    ad::Tape tape_;
    RunState state_;
    data::Batch last_batch_;
    std::unique_ptr<SaveFolderLock> save_lock_;  // rank 0's hold on `save` while the run lives
};

}  // namespace remat::train
