#pragma once
// What a training run draws its micro-batches from (train::Trainer): examples by index, made into a
// batch of named tensors, as HF's forward takes keyword arguments.
//
//   const data::LmWindows windows(corpus, 128);           // examples: the corpus's windows of 128 tokens
//   data::Batch b = windows.batch(std::vector<std::uint64_t>{7, 3}, {.seed = 0, .step = 1});
//   b.id("input_ids");                                    // (2, 128)
//
// A batch's randomness (a masked LM's masks) is keyed by (seed, step, micro-batch), so the same
// examples under the same key give the same batch in any order, on any rank, after a resume.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "remat/core/tensor.hpp"
#include "remat/data/corpus.hpp"
#include "remat/data/masking.hpp"

namespace remat::data {

// A micro-batch: its tensors by name.
struct Batch {
    std::map<std::string, IdTensor> ids{};  // "input_ids", "labels", "attention_mask", "token_type_ids", …
    std::map<std::string, Tensor> values{};  // floating-point inputs (features, pixel_values)

    // ValueError "the batch has no \"labels\"" for a name it does not hold.
    const IdTensor& id(const std::string& name) const;
    const Tensor& value(const std::string& name) const;
    // An optional input: null when the batch has none.
    const IdTensor* find_id(const std::string& name) const;
};

class Dataset {
public:
    virtual ~Dataset() = default;
    virtual std::uint64_t size() const = 0;  // examples
    // The tokens one example trains (tokens/s and the run's token count); 0 for data without tokens.
    virtual std::size_t tokens_per_example() const = 0;
    // Examples `indices` (each < size()), in that order, as one batch.
    virtual Batch batch(std::span<const std::uint64_t> indices, const MaskingKey& key) const = 0;
    virtual std::string name() const = 0;  // for messages: the path it reads
};

// How BERT frames a masked LM's window: [CLS] + seq − 2 corpus tokens + [SEP] (its single sequence),
// then masked as HF's DataCollatorForLanguageModeling masks it, keyed.
struct BertFraming {
    MaskingRule rule;
    std::int64_t cls_id = 0, sep_id = 0;
};

// A language model's examples: the corpus's windows of `seq` tokens. A causal LM's as they are, labels
// = the inputs (the model shifts them, as HF's GPT2LMHeadModel and run_clm); a masked LM's framed and
// masked by `framing`.
class LmWindows final : public Dataset {
public:
    // ValueError when framing is given and seq < 3.
    LmWindows(const TokenCorpus& corpus, std::size_t seq, std::optional<BertFraming> framing = std::nullopt);
    std::uint64_t size() const override;
    std::size_t tokens_per_example() const override { return seq_; }
    Batch batch(std::span<const std::uint64_t> indices, const MaskingKey& key) const override;
    std::string name() const override { return corpus_.name(); }

private:
    std::size_t corpus_tokens() const { return framing_ ? seq_ - 2 : seq_; }  // a window's, from the corpus

    const TokenCorpus& corpus_;
    std::size_t seq_;
    std::optional<BertFraming> framing_;
};

}  // namespace remat::data
