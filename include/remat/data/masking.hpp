#pragma once
// Masked-LM batches as HuggingFace's DataCollatorForLanguageModeling(mlm=True) makes them: each token
// that is not special is selected with probability mlm_probability; labels hold the original id where
// selected and -100 elsewhere; a selected token becomes [MASK] with probability 0.8, else a uniformly
// random id with probability 0.5 (so 10 % of the selected), else stays. docs/tokenizer.md
// ("Masked-LM batches") tells the key and the windows.
#include <cstdint>
#include <span>
#include <vector>

#include "remat/core/random.hpp"
#include "remat/core/tensor.hpp"

namespace remat::data {

// The label of a position the loss ignores (cross_entropy's ignore index, PyTorch's -100).
constexpr std::int64_t ignore_label = -100;

struct MaskingRule {
    std::vector<std::int64_t> special_ids{};  // never selected: [CLS], [SEP], [PAD], [UNK], [MASK], ...
    std::int64_t mask_id = 0;                 // [MASK]
    std::int64_t vocab_size = 0;              // random replacements are uniform in [0, vocab_size)
    double mlm_probability = 0.15;
};

// Which masks a batch gets: a pure function of these three numbers, so the same key gives the same
// masks on any number of threads, in any order of batches, and after resuming a run.
struct MaskingKey {
    std::uint64_t seed = 0;
    std::uint64_t step = 0;        // the optimiser step
    std::uint64_t micro_batch = 0;  // the micro-batch within the step (gradient accumulation), or rank
};

// The generator behind a key: Generator(seed).fork(stream "mask").fork(step).fork(micro_batch). Token
// (b, t) of a (B, T) batch draws blocks 2·(b·T + t) and 2·(b·T + t) + 1 of it and nothing else.
Generator masking_generator(const MaskingKey& key);

struct MaskedBatch {
    IdTensor input_ids;  // (B, T): the inputs with [MASK] / random / unchanged at selected positions
    IdTensor labels;     // (B, T): the original id where selected, ignore_label elsewhere
};

// input_ids: (B, T). ValueError for a batch that is not 2-D or is empty, an id outside
// [0, vocab_size), a mask_id outside it, or an mlm_probability outside [0, 1].
MaskedBatch mask_tokens(const IdTensor& input_ids, const MaskingRule& rule, const MaskingKey& key);

// BERT's single-sequence window, as build_inputs_with_special_tokens makes it: [CLS] + run + [SEP],
// T = run.size() + 2 ids.
std::vector<std::int64_t> bert_window(std::span<const std::int64_t> run, std::int64_t cls_id, std::int64_t sep_id);

}  // namespace remat::data
