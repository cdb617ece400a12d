#include "remat/data/dataset.hpp"

#include <algorithm>
#include <vector>

#include "remat/core/error.hpp"

namespace remat::data {

namespace {
template <class Map>
const typename Map::mapped_type& named(const Map& tensors, const std::string& name) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) throw ValueError("the batch has no \"" + name + "\"");
    return it->second;
}

// The corpus windows `indices` of `run` tokens each, as rows.
IdTensor windows_of(const TokenCorpus& corpus, std::span<const std::uint64_t> indices, std::size_t run) {
    IdTensor out = IdTensor::from_shape({indices.size(), run});
    for (std::size_t b = 0; b < indices.size(); ++b) corpus.window(indices[b], run, out.data() + b * run);
    return out;
}
}  // namespace

const IdTensor& Batch::id(const std::string& name) const { return named(ids, name); }
const Tensor& Batch::value(const std::string& name) const { return named(values, name); }
const IdTensor* Batch::find_id(const std::string& name) const {
    const auto it = ids.find(name);
    return it == ids.end() ? nullptr : &it->second;
}

CausalLmWindows::CausalLmWindows(const TokenCorpus& corpus, std::size_t seq) : corpus_(corpus), seq_(seq) {}

std::uint64_t CausalLmWindows::size() const { return corpus_.windows(seq_); }

Batch CausalLmWindows::batch(std::span<const std::uint64_t> indices, const MaskingKey&) const {
    IdTensor ids = windows_of(corpus_, indices, seq_);
    Batch b;
    b.ids.emplace("labels", ids);
    b.ids.emplace("input_ids", std::move(ids));
    return b;
}

MaskedLmWindows::MaskedLmWindows(const TokenCorpus& corpus, std::size_t seq, MaskingRule rule, std::int64_t cls_id,
                                 std::int64_t sep_id)
    : corpus_(corpus), seq_(seq), rule_(std::move(rule)), cls_(cls_id), sep_(sep_id) {
    if (seq < 3) throw ValueError("a masked-LM window needs at least 3 tokens ([CLS] + tokens + [SEP]), got " + std::to_string(seq));
}

std::uint64_t MaskedLmWindows::size() const { return corpus_.windows(seq_ - 2); }

Batch MaskedLmWindows::batch(std::span<const std::uint64_t> indices, const MaskingKey& key) const {
    const std::size_t run = seq_ - 2;
    const IdTensor windows = windows_of(corpus_, indices, run);
    IdTensor framed = IdTensor::from_shape({indices.size(), seq_});
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const auto w = bert_window({windows.data() + i * run, run}, cls_, sep_);
        std::copy(w.begin(), w.end(), framed.data() + i * seq_);
    }
    MaskedBatch masked = mask_tokens(framed, rule_, key);
    Batch b;
    b.ids.emplace("input_ids", std::move(masked.input_ids));
    b.ids.emplace("labels", std::move(masked.labels));
    return b;
}

}  // namespace remat::data
