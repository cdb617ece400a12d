#include "remat/data/packing.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include "remat/core/error.hpp"

namespace remat::data {

PackedExamples::PackedExamples(SupervisedExamples examples, std::size_t seq, std::int64_t pad_id, std::string name)
    : examples_(std::move(examples)), seq_(seq), pad_id_(pad_id), name_(std::move(name)) {
    const std::vector<SupervisedExample>& all = examples_.examples;
    if (all.empty()) throw ValueError(name_ + ": no examples");
    std::size_t tokens = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const std::size_t n = all[i].input_ids.size();
        if (n == 0 || all[i].labels.size() != n)
            throw ValueError(name_ + ": an example without tokens, or with labels of another length");
        if (n > seq_)
            throw ValueError(name_ + ": example " + std::to_string(i) + " has " + std::to_string(n) +
                             " tokens, more than a packed row of " + std::to_string(seq_));
        tokens += n;
    }
    // Longest first (ties in file order); each into the row with the least room that still holds it.
    std::vector<std::size_t> order(all.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return all[a].input_ids.size() > all[b].input_ids.size(); });
    std::set<std::pair<std::size_t, std::size_t>> room;  // (free tokens, row)
    for (const std::size_t i : order) {
        const std::size_t n = all[i].input_ids.size();
        auto fit = room.lower_bound({n, 0});
        std::size_t row = rows_.size(), left = seq_;
        if (fit != room.end()) {
            std::tie(left, row) = *fit;
            room.erase(fit);
        } else {
            rows_.emplace_back();
        }
        rows_[row].push_back(i);
        if (left > n) room.emplace(left - n, row);
    }
    padding_ = rows_.size() * seq_ - tokens;
    mean_tokens_ = (tokens + rows_.size() - 1) / rows_.size();
}

Batch PackedExamples::batch(std::span<const std::uint64_t> indices, const MaskingKey&) const {
    if (indices.empty()) throw ValueError(name_ + ": an empty batch");
    const std::size_t B = indices.size();
    IdTensor ids = IdTensor::from_shape({B, seq_}), labels = IdTensor::from_shape({B, seq_}),
             positions = IdTensor::from_shape({B, seq_});
    for (std::size_t b = 0; b < B; ++b) {
        const std::uint64_t r = indices[b];
        if (r >= rows_.size()) throw ValueError(name_ + ": row " + std::to_string(r) + " of " + std::to_string(rows_.size()));
        std::size_t t = 0;
        for (const std::size_t e : rows_[r]) {
            const SupervisedExample& example = examples_.examples[e];
            for (std::size_t j = 0; j < example.input_ids.size(); ++j, ++t) {
                ids(b, t) = example.input_ids[j];
                labels(b, t) = j == 0 ? ignore_label : example.labels[j];
                positions(b, t) = static_cast<std::int64_t>(j);
            }
        }
        for (std::size_t j = 0; t < seq_; ++j, ++t) {  // padding: a sequence of its own that nothing attends to
            ids(b, t) = pad_id_;
            labels(b, t) = ignore_label;
            positions(b, t) = static_cast<std::int64_t>(j);
        }
    }
    return {.ids = {{"input_ids", std::move(ids)}, {"labels", std::move(labels)}, {"position_ids", std::move(positions)}}};
}

}  // namespace remat::data
