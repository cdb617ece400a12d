#pragma once
// Supervised fine-tuning examples from a JSONL file, one object per line, in the formats of HF TRL's
// SFTTrainer, mlx_lm.lora and torchtune, tokenised as HF does and labelled for a loss on the answer:
//
//   text        {"text": "…"}                         tokenizer(text); every token labelled
//   completion  {"prompt": "…", "completion": "…"}    tokenizer(prompt + completion); the prompt's tokens
//                                                      unlabelled (-100) when mask_prompt
//   chat        {"messages": [{"role": …, "content": …}, …]}   the model's chat template's text, tokenised
//                                                      without adding special tokens; only the assistant
//                                                      turns (with their end-of-turn text) labelled when
//                                                      mask_prompt
//
// A chat's assistant turns are found as HF's templates allow: the text of the turns before one, with the
// generation prompt, and the text up to its end are each a beginning of the whole text, in tokens too.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "remat/data/dataset.hpp"
#include "remat/data/masking.hpp"  // ignore_label
#include "remat/text/chat_template.hpp"
#include "remat/text/tokenizer.hpp"

namespace remat::data {

enum class SupervisedFormat { text, completion, chat };
// "text", "completion" or "chat"; ValueError naming the others for anything else.
SupervisedFormat parse_supervised_format(const std::string& name);

struct SupervisedExample {
    std::vector<std::int64_t> input_ids;
    std::vector<std::int64_t> labels;  // input_ids[i], or ignore_label
};

struct SupervisedOptions {
    SupervisedFormat format = SupervisedFormat::text;
    bool mask_prompt = true;      // completion and chat: labels on the answer only
    std::size_t max_tokens = 0;   // examples longer are cut to this many tokens (0: none)
};

struct SupervisedExamples {
    std::vector<SupervisedExample> examples;
    std::size_t cut = 0;  // how many were longer than max_tokens
    // Left out: no token after the first labelled (within max_tokens), so nothing to learn — a batch
    // of only such examples would have no loss at all.
    std::size_t unlabelled = 0;
};

// The examples of a JSONL file. FormatError "FILE:LINE: …" for a line that is not a JSON object, lacks
// the format's field or holds a wrong type, has invalid UTF-8, or a conversation the template refuses
// (its message) or renders so that its assistant turns cannot be found; a file without examples. Blank
// lines are skipped. `chat` is needed for the chat format only. FormatError also when every example is
// unlabelled (SupervisedExamples::unlabelled).
SupervisedExamples read_supervised(const std::filesystem::path& jsonl, const text::Tokenizer& tokenizer,
                                   const text::ChatTemplate* chat, const SupervisedOptions& options);

// The examples as training batches (train::Trainer's Dataset): a micro-batch of examples is padded on
// the right to its longest, as HF's DataCollatorForSeq2Seq pads — input_ids with `pad_id`, labels
// with ignore_label, attention_mask 1 on the tokens and 0 on the padding. A causal LM attends only
// to earlier positions, so an example's loss does not depend on what it is batched with.
class SupervisedBatches final : public Dataset {
public:
    // ValueError for no examples or an example without tokens.
    SupervisedBatches(SupervisedExamples examples, std::int64_t pad_id, std::string name);

    std::uint64_t size() const override { return examples_.examples.size(); }
    std::size_t tokens_per_example() const override { return mean_tokens_; }  // the examples' mean length
    Batch batch(std::span<const std::uint64_t> indices, const MaskingKey& key) const override;
    std::string name() const override { return name_; }
    const SupervisedExamples& examples() const { return examples_; }

private:
    SupervisedExamples examples_;
    std::int64_t pad_id_;
    std::string name_;
    std::size_t mean_tokens_ = 0;
};

}  // namespace remat::data
