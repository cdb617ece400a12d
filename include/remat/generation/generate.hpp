#pragma once
// Text generation for every causal LM of the table (GPT-2, the Llama family), as HF's generate():
// the prompts run once through the model, filling a KV cache (layers/kv_cache.hpp); then each step
// feeds the tokens just chosen and reads the logits of the last position (sampling.hpp chooses).
// Prompts of different lengths are left-padded with an attention mask, positions counted per sequence,
// as HF's generate does. Runs under no-grad: dropouts in automatic mode (the default) are off.
//
//     generation::Options o;
//     o.max_new_tokens = 32;
//     o.stop_ids = {eos};
//     o.on_token = [](std::size_t sequence, std::int64_t token) { ...; return true; };   // stream
//     generation::Result r = generation::generate(model, {prompt_ids}, o);
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "remat/ad/backend.hpp"
#include "remat/generation/sampling.hpp"
#include "remat/layers/kv_cache.hpp"

namespace remat::generation {

struct Options {
    std::size_t max_new_tokens = 20;
    Sampling sampling;                     // greedy by default
    std::vector<std::int64_t> stop_ids;    // a sequence ends with the first of these it produces (kept in its tokens)
    std::uint64_t seed = 0;                // sampling's generator: the same seed, the same tokens
    std::int64_t pad_id = 0;               // what left padding and finished sequences are fed
    std::size_t context_length = 0;        // the most positions a sequence may take; 0: the model's own limit
    // Each new token, as it is chosen (to stream it); returning false ends that sequence there (a stop
    // string, say).
    std::function<bool(std::size_t sequence, std::int64_t token)> on_token;
};

struct Result {
    std::vector<std::vector<std::int64_t>> tokens;  // per prompt: the new tokens, a stop id included
    std::vector<bool> stopped;                      // per prompt: ended by a stop id or on_token
    bool context_full = false;  // generation ended because the model's context was full
    std::size_t cache_bytes = 0;
    double prefill_seconds = 0;  // the prompts' forward and the first tokens (time to first token)
    double decode_seconds = 0;   // every later step
    std::size_t decode_steps = 0;
};

namespace detail {

// The bookkeeping of one generate call, compiled once for every model.
class Decoding {
public:
    // ValueError: no prompt, an empty prompt, max_new_tokens 0, a prompt longer than context_length,
    // bad sampling settings.
    Decoding(const std::vector<std::vector<std::int64_t>>& prompts, const Options& options, std::size_t context_length);
    const IdTensor& prompt_ids() const { return prompt_ids_; }    // (B, T) left-padded
    const IdTensor& prompt_mask() const { return prompt_mask_; }  // (B, T), or empty when no prompt is padded
    std::size_t capacity() const { return capacity_; }            // positions the cache needs
    // Chooses each unfinished sequence's next token from the step's logits (B, V); false when done.
    bool take(const Var& logits);
    IdTensor next_ids() const;  // (B, 1): the tokens just chosen (pad_id for finished sequences)
    void prefill_done(std::size_t cache_bytes);
    Result finish();

private:
    const Options& options_;
    std::size_t batch_, capacity_, fed_;  // fed_: positions given to the model so far
    IdTensor prompt_ids_, prompt_mask_;
    std::vector<std::vector<std::int64_t>> seen_;  // per sequence: its input ids, padding included (HF's input_ids)
    std::vector<std::int64_t> last_;
    Generator rng_;
    Result result_;
    double start_ = 0, prefilled_ = 0;
};

}  // namespace detail

// `model` is a causal LM of the table: next_logits(ids, cache, mask) and context_length().
template <class Model>
Result generate(Model& model, const std::vector<std::vector<std::int64_t>>& prompts, const Options& options) {
    ad::NoGrad no_grad;
    const std::size_t limit = model.context_length();
    detail::Decoding decoding(prompts, options, options.context_length ? std::min(options.context_length, limit) : limit);
    nn::KVCache cache(prompts.size(), decoding.capacity());
    bool more = decoding.take(model.next_logits(decoding.prompt_ids(), cache, decoding.prompt_mask()));
    decoding.prefill_done(cache.bytes());
    while (more) more = decoding.take(model.next_logits(decoding.next_ids(), cache));
    return decoding.finish();
}

}  // namespace remat::generation
