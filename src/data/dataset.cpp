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
}  // namespace

const IdTensor& Batch::id(const std::string& name) const { return named(ids, name); }
const Tensor& Batch::value(const std::string& name) const { return named(values, name); }
const IdTensor* Batch::find_id(const std::string& name) const {
    const auto it = ids.find(name);
    return it == ids.end() ? nullptr : &it->second;
}

LmWindows::LmWindows(const TokenCorpus& corpus, std::size_t seq, std::optional<BertFraming> framing)
    : corpus_(corpus), seq_(seq), framing_(std::move(framing)) {
    if (framing_ && seq < 3)
        throw ValueError("a masked-LM window needs at least 3 tokens ([CLS] + tokens + [SEP]), got " + std::to_string(seq));
}

std::uint64_t LmWindows::size() const { return corpus_.windows(corpus_tokens()); }

Batch LmWindows::batch(std::span<const std::uint64_t> indices, const MaskingKey& key) const {
    const std::size_t run = corpus_tokens();
    IdTensor windows = IdTensor::from_shape({indices.size(), run});
    for (std::size_t b = 0; b < indices.size(); ++b) corpus_.window(indices[b], run, windows.data() + b * run);
    Batch out;
    if (!framing_) {
        out.ids.emplace("labels", windows);
        out.ids.emplace("input_ids", std::move(windows));
        return out;
    }
    IdTensor framed = IdTensor::from_shape({indices.size(), seq_});
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const auto w = bert_window({windows.data() + i * run, run}, framing_->cls_id, framing_->sep_id);
        std::copy(w.begin(), w.end(), framed.data() + i * seq_);
    }
    MaskedBatch masked = mask_tokens(framed, framing_->rule, key);
    out.ids.emplace("input_ids", std::move(masked.input_ids));
    out.ids.emplace("labels", std::move(masked.labels));
    return out;
}

}  // namespace remat::data
