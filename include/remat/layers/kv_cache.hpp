#pragma once
// The keys and values every attention layer has computed for the tokens a model has seen, so that
// one more token costs its own projections and attention over the cache instead of a forward of the
// whole sequence (HF's DynamicCache, preallocated). Generation only: under no-grad.
//
// One forward of new tokens through a model with a cache:
//     nn::KVCache::Step step(cache, new_mask, T_new);   // step.positions(): HF's position ids of the new tokens
//     ... each attention layer, in order:  auto [k_all, v_all] = cache.append(k_new, v_new);
//     step.finish();                                   // the new tokens are now the past
// A forward that throws before finish() leaves the cache as it was.
#include <cstddef>
#include <utility>
#include <vector>

#include "remat/ad/var.hpp"
#include "remat/layers/attention.hpp"

namespace remat::nn {

class KVCache {
public:
    // For `batch` sequences of up to `capacity` positions. The first forward allocates each layer's keys
    // and values whole, at their width (KV heads × head size), for the capacity (bytes()).
    KVCache(std::size_t batch, std::size_t capacity);

    // Starts a forward of T_new tokens per sequence. new_mask (B, T_new) of 1 (token) and 0 (padding,
    // as left-padded prompts have), or empty for all tokens. Returns their position ids as HF's generate
    // makes them: the number of tokens before it in its sequence, 1 at a padding position.
    // ValueError when the tokens would pass the capacity.
    IdTensor begin(const IdTensor& new_mask, std::size_t new_tokens);
    // The attention mask over every position so far, the new ones included: (B, length + T_new) as the
    // key padding of the attention; null when no position is padding.
    const PaddingMask& key_padding() const { return key_padding_; }
    // Called by each attention layer in turn, layer 0 first: stores the new tokens' k and v
    // (B, T_new, kv_width) and returns the keys and values of every position so far, (B, length + T_new,
    // kv_width) each.
    std::pair<Var, Var> append(const Var& k, const Var& v);
    // Ends the forward: the new tokens become the past. ValueError unless every layer appended.
    void end();
    // Forgets the forward begun: the cache is as before begin().
    void cancel();

    // begin() now, cancel() at scope exit unless finish() (end()) ran.
    class Step {
    public:
        Step(KVCache& cache, const IdTensor& new_mask, std::size_t new_tokens)
            : cache_(cache), positions_(cache.begin(new_mask, new_tokens)) {}
        ~Step() {
            if (!finished_) cache_.cancel();
        }
        Step(const Step&) = delete;
        Step& operator=(const Step&) = delete;
        const IdTensor& positions() const { return positions_; }
        void finish() {
            cache_.end();
            finished_ = true;
        }

    private:
        KVCache& cache_;
        IdTensor positions_;
        bool finished_ = false;
    };

    std::size_t length() const { return length_; }  // positions cached
    std::size_t capacity() const { return capacity_; }
    std::size_t batch() const { return batch_; }
    std::size_t layers() const { return k_.size(); }
    std::size_t bytes() const;  // of keys and values

private:
    std::size_t batch_, capacity_;
    std::vector<Tensor> k_, v_;          // per layer, (B, capacity, kv_width)
    IdTensor mask_;                      // (B, capacity): 1 token, 0 padding
    std::vector<std::int64_t> tokens_;   // per sequence: tokens (not padding) so far
    std::vector<std::int64_t> tokens_before_;  // ... before the forward begun
    bool padded_before_ = false;
    std::size_t length_ = 0, pending_ = 0, next_layer_ = 0;
    bool padded_ = false;                // some position is padding
    PaddingMask key_padding_;
};

}  // namespace remat::nn
