#pragma once
// Supervised examples packed into rows of `seq` tokens, as TRL's SFTTrainer packs them by default
// (packing_strategy "bfd"): whole examples, longest first, each into the fullest row it still fits
// (best-fit decreasing; ties to the earlier row), the rest of a row padding. Each example's position_ids restart at 0, so
// the model keeps the examples apart (nn::sequence_starts: no token attends across into another
// example, positions as if alone): packing changes how fast a run goes, not its loss. An example's
// first label is dropped, as it would be predicted from the example before it.
//
//   data::PackedExamples rows(std::move(examples), 512, pad_id, "chat.jsonl");
//   rows.size();  // rows, not examples: an epoch visits each row once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "remat/data/dataset.hpp"
#include "remat/data/supervised.hpp"

namespace remat::data {

class PackedExamples final : public Dataset {
public:
    // ValueError for no examples, an example without tokens or one longer than seq (cut them first:
    // SupervisedOptions::max_tokens).
    PackedExamples(SupervisedExamples examples, std::size_t seq, std::int64_t pad_id, std::string name);

    std::uint64_t size() const override { return rows_.size(); }
    std::size_t tokens_per_example() const override { return mean_tokens_; }  // a row's tokens, on average
    // input_ids, labels and position_ids (B, seq); padding: pad_id, unlabelled, its own positions.
    Batch batch(std::span<const std::uint64_t> indices, const MaskingKey& key) const override;
    std::string name() const override { return name_; }

    std::size_t examples() const { return examples_.examples.size(); }
    std::size_t padding() const { return padding_; }  // tokens, over all rows

private:
    SupervisedExamples examples_;
    std::size_t seq_;
    std::int64_t pad_id_;
    std::string name_;
    std::vector<std::vector<std::size_t>> rows_;  // each row's examples, in order
    std::size_t mean_tokens_ = 0, padding_ = 0;
};

}  // namespace remat::data
