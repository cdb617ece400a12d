#pragma once
// What `remat train` and `remat demo` share: a text turned into token ids, windows of it drawn
// deterministically from a seed, and one AdamW step of a causal language model on its own tape,
// measured.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/random.hpp"
#include "remat/ops/precision.hpp"
#include "remat/train/optimisers.hpp"
#include "remat/text/tokenizer.hpp"
#include "models/architecture.hpp"
#include "cli/model_folder.hpp"

namespace remat::cli {

// Reads a text file whole (up to 1 GiB); naming the file when it cannot be read or is empty.
std::string read_text_file(const std::filesystem::path& path);

// The folder's tokenizer, of the kind its architecture declares; Failure when remat has none for it.
text::FolderTokenizer tokenizer_of(const ModelFolder& folder, std::size_t vocab_size);
// The tokenizer of a model folder (as tokenizer_of) or of a folder holding only tokenizer files
// (tokenizer.json, vocab.json + merges.txt, or BERT's vocab.txt): what `remat encode` and `remat tokenize` read.
text::FolderTokenizer tokenizer_of_folder(const std::filesystem::path& dir);

// The window length: --seq if given, else min(128, n_positions); Failure unless 2 <= seq <= n_positions.
std::size_t window_length(std::optional<std::int64_t> seq, std::size_t n_positions);

// The token ids of `text`; Failure naming `source` when they are fewer than one window of `seq`.
std::vector<std::int64_t> tokenize(const text::Tokenizer& tokenizer, std::string_view text, std::string_view source,
                                   std::size_t seq);

// Windows of `seq` consecutive ids, each starting at an offset drawn uniformly from every possible
// one by a generator seeded with `seed`: the same seed gives the same batches.
class WindowSampler {
public:
    WindowSampler(const std::vector<std::int64_t>& ids, std::size_t seq, std::uint64_t seed);
    IdTensor next(std::size_t batch);  // (batch, seq)

private:
    const std::vector<std::int64_t>& ids_;
    std::size_t seq_;
    Generator rng_;
};

// Training hyper-parameters, with HF Trainer's defaults (torch AdamW, max_grad_norm 1).
struct Hyper {
    float lr = 5e-5f;
    float weight_decay = 0.0f;
    float clip = 1.0f;  // global gradient norm; 0 turns clipping off
};

struct StepResult {
    float loss = 0;
    double seconds = 0;                     // forward, backward, clipping and update
    std::size_t peak_activation_bytes = 0;  // live bytes above the step's start
};

// A causal language model with its optimiser state and its own tape, so that two of them (the
// demo's plain and checkpointed runs) train side by side without sharing gradients.
struct Trainer {
    std::unique_ptr<models::Model> model;
    std::unique_ptr<train::Optimiser> optimiser;
    ad::Tape tape;
    float clip;
    Precision precision;  // of the forward and backward

    Trainer(std::unique_ptr<models::Model> m, const Hyper& hyper, Precision p = Precision::fp32)
        : model(std::move(m)),
          optimiser(model->adamw(train::AdamW{.lr = hyper.lr, .weight_decay = hyper.weight_decay})),
          clip(hyper.clip),
          precision(p) {}

    // Forward and backward of the LM loss on `batch` (labels = the ids, as HF's run_clm), leaving
    // the gradients on the tape; `before_update` sees them (one Tensor* per parameter, in
    // parameters() order, null for none) before clipping and the AdamW update.
    template <class BeforeUpdate>
    StepResult step(const IdTensor& batch, BeforeUpdate&& before_update) {
        ad::UseBackend use(tape);
        tape.zero_grad();  // keeps the buffers: after the first step they are part of the baseline
        memory::PeakScope scope;
        const auto start = std::chrono::steady_clock::now();
        StepResult r;
        {
            const Autocast autocast(precision);  // forward and backward; the update after, outside it
            Var logits = model->logits({.ids = {{"input_ids", batch}}});
            Var loss = model->loss(logits, batch);
            tape.backward(loss);
            r.loss = loss.value().data()[0];
        }
        std::vector<Tensor*> grads;
        for (Param* p : model->parameters()) grads.push_back(p->frozen ? nullptr : tape.grad(p->value));
        before_update(std::as_const(grads));
        if (clip > 0) train::clip_grad_norm(std::span<Tensor* const>(grads), clip);
        optimiser->update(std::span<const Tensor* const>(grads.data(), grads.size()));
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        r.peak_activation_bytes = scope.peak_above_baseline();
        return r;
    }
    StepResult step(const IdTensor& batch) {
        return step(batch, [](const std::vector<Tensor*>&) {});
    }
};

// "0:07", "12:05", "1:02:03".
std::string format_duration(double seconds);

}  // namespace remat::cli
