#include "remat/layers/kv_cache.hpp"

#include <algorithm>
#include <cstring>

#include "remat/ad/backend.hpp"
#include "remat/core/error.hpp"

namespace remat::nn {

KVCache::KVCache(std::size_t batch, std::size_t capacity)
    : batch_(batch), capacity_(capacity), mask_(IdTensor::from_shape({batch, capacity})), tokens_(batch, 0) {
    if (batch == 0 || capacity == 0)
        throw ValueError("KVCache: batch and capacity must be positive, got " + std::to_string(batch) + " and " + std::to_string(capacity));
    std::fill(mask_.begin(), mask_.end(), std::int64_t{0});
}

std::size_t KVCache::bytes() const {
    std::size_t n = 0;
    for (std::size_t l = 0; l < k_.size(); ++l) n += (k_[l].size() + v_[l].size()) * sizeof(float);
    return n;
}

IdTensor KVCache::begin(const IdTensor& new_mask, std::size_t T) {
    if (next_layer_ != 0 || pending_ != 0) throw ValueError("KVCache: begin() before the last forward's end()");
    if (T == 0) throw ValueError("KVCache: a forward needs at least one new token");
    if (length_ + T > capacity_)
        throw ValueError("KVCache: " + std::to_string(length_) + " cached + " + std::to_string(T) + " new tokens exceed its capacity of " +
                         std::to_string(capacity_));
    const bool masked = new_mask.dimension() > 0;
    if (masked && (new_mask.dimension() != 2 || new_mask.shape()[0] != batch_ || new_mask.shape()[1] != T))
        throw ShapeError("KVCache: expected a mask (" + std::to_string(batch_) + ", " + std::to_string(T) + ") for the new tokens, got " +
                         remat::to_string(Shape(new_mask.shape().begin(), new_mask.shape().end())));
    tokens_before_ = tokens_;
    padded_before_ = padded_;
    IdTensor positions = IdTensor::from_shape({batch_, T});
    for (std::size_t b = 0; b < batch_; ++b)
        for (std::size_t t = 0; t < T; ++t) {
            const bool token = !masked || new_mask(b, t) != 0;
            mask_(b, length_ + t) = token ? 1 : 0;
            padded_ = padded_ || !token;
            positions(b, t) = token ? tokens_[b]++ : 1;  // cumsum(mask) − 1, and 1 where padded (HF's generate)
        }
    pending_ = T;
    key_padding_ = nullptr;
    if (padded_) {
        IdTensor seen = IdTensor::from_shape({batch_, length_ + T});
        for (std::size_t b = 0; b < batch_; ++b)
            for (std::size_t t = 0; t < length_ + T; ++t) seen(b, t) = mask_(b, t);
        key_padding_ = padding_mask(seen);
    }
    return positions;
}

std::pair<Var, Var> KVCache::append(const Var& k, const Var& v) {
    if (pending_ == 0) throw ValueError("KVCache: append() outside begin() … end()");
    if (ad::current().recording()) throw ValueError("KVCache: generation runs under no-grad (ad::NoGrad)");
    const bool first = length_ == 0 && next_layer_ == k_.size();  // the first forward meets this layer
    if (!first && next_layer_ >= k_.size())
        throw ValueError("KVCache: more attention layers than the " + std::to_string(k_.size()) + " of the first forward");
    const std::size_t W = first ? (k.dim() == 3 ? k.shape()[2] : 0) : k_[next_layer_].shape()[2];
    const Shape expected{batch_, pending_, W};
    if (W == 0 || k.shape() != expected || v.shape() != expected)
        throw ShapeError("KVCache: expected k and v " + remat::to_string(expected) + ", got " + remat::to_string(k.shape()) + " and " + remat::to_string(v.shape()));
    if (first) {
        k_.push_back(zeros(Shape{batch_, capacity_, W}));
        v_.push_back(zeros(Shape{batch_, capacity_, W}));
    }
    const std::size_t L = length_ + pending_, row = W * sizeof(float);
    Tensor& K = k_[next_layer_];
    Tensor& V = v_[next_layer_];
    Tensor k_all = empty(Shape{batch_, L, W}), v_all = empty(Shape{batch_, L, W});
    for (std::size_t b = 0; b < batch_; ++b) {
        float* kb = K.data() + b * capacity_ * W;
        float* vb = V.data() + b * capacity_ * W;
        std::memcpy(kb + length_ * W, k.value().data() + b * pending_ * W, pending_ * row);
        std::memcpy(vb + length_ * W, v.value().data() + b * pending_ * W, pending_ * row);
        std::memcpy(k_all.data() + b * L * W, kb, L * row);
        std::memcpy(v_all.data() + b * L * W, vb, L * row);
    }
    ++next_layer_;
    return {Var(std::move(k_all)), Var(std::move(v_all))};
}

void KVCache::cancel() {
    if (pending_ == 0) return;
    if (length_ == 0) k_.clear(), v_.clear();  // a failed first forward: the next learns the layers again
    tokens_ = tokens_before_;
    padded_ = padded_before_;
    pending_ = 0;
    next_layer_ = 0;
}

void KVCache::end() {
    if (next_layer_ == 0 || next_layer_ != k_.size())
        throw ValueError("KVCache: " + std::to_string(next_layer_) + " attention layers appended in this forward, " +
                         std::to_string(k_.size()) + " in the first");
    length_ += pending_;
    pending_ = 0;
    next_layer_ = 0;
}

}  // namespace remat::nn
