#pragma once
// `remat train DIR --data DATA`: a training run of a causal language model folder (the contract:
// ../docs/training.md and ../docs/cli.md) — epochs over consecutive windows of a token stream,
// gradient accumulation, a learning-rate schedule, validation, checkpoints every N steps that a
// resumed run continues from bit for bit, a JSONL log, and the trained model saved in HF's format.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "remat/ops/precision.hpp"

namespace remat::cli {

struct TrainOptions {
    std::filesystem::path dir, data;
    std::optional<std::filesystem::path> valid, save, resume, log;
    std::optional<std::int64_t> steps, epochs;  // at most one; neither: 1 epoch
    std::int64_t batch = 8, accumulate = 1;
    std::optional<std::int64_t> seq;  // default: min(128, n_positions)
    std::int64_t validate_every = 0;  // 0: only at the end
    std::optional<std::int64_t> valid_windows;  // default: every window of --valid
    std::int64_t save_every = 0;                // 0: only the final model (and on interrupt)
    std::int64_t keep = 0;                      // checkpoints kept; 0: all
    std::string checkpoint = "none";            // a Policy::parse spec
    std::string schedule = "linear";            // constant, linear or cosine (HF Trainer's default: linear)
    std::int64_t warmup = 0;
    float lr = 5e-5f, min_lr = 0, weight_decay = 0, clip = 1;
    std::uint64_t seed = 0;                  // windows' order and dropout
    std::optional<std::int64_t> log_every;   // plain-line interval off a terminal; default: about 20 lines
    Precision precision = Precision::fp32;   // of the steps' and validation's products (docs/precision.md)
    // Under mpirun: sum each gradient bucket across ranks while backward still runs (false: after
    // it; the same bits, for measuring what the overlap hides).
    bool sum_during_backward = true;
    std::size_t bucket_bytes = std::size_t{4} << 20;  // gradients per bucket of that sum
    bool shard_optimizer = false;  // under mpirun: ZeRO-1, each rank the optimiser state of its share
    // LoRA (docs/lora.md): a new adapter from --lora's text (cli/lora.hpp), or an existing one in HF
    // PEFT's format to go on training; the base frozen, only the adapter saved.
    std::optional<std::string> lora;
    std::optional<std::filesystem::path> adapter;
    // bf16: the frozen base's projection weights held in bf16 only (half their memory; their products in bf16).
    Precision base_precision = Precision::fp32;
    // Supervised fine-tuning (docs/training.md): --data and --valid are JSONL files of examples in this
    // format ("text", "completion" or "chat"), the loss on the answers (mask_prompt, the default), each
    // micro-batch padded to its longest example or, with pack, examples packed into rows of --seq.
    std::optional<std::string> format;
    std::optional<bool> mask_prompt;
    bool pack = false;
};

int train(const TrainOptions& options);

// `remat train` and its flags, registered on the `remat` app.
Command add_train_command(CLI::App& remat);

}  // namespace remat::cli
