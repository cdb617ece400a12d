#pragma once
// Choosing the next token from a row of logits, as HF's generate does: its logits processors in its
// order — repetition penalty, then (when sampling) temperature, top-k and top-p — then the argmax
// (greedy) or a draw from the softmax. transformers 4.57's RepetitionPenaltyLogitsProcessor,
// TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper, in double precision.
#include <cstdint>
#include <span>
#include <vector>

#include "remat/core/random.hpp"

namespace remat::generation {

struct Sampling {
    bool do_sample = false;           // false: greedy, the largest logit (after the repetition penalty)
    double temperature = 1.0;         // > 0; logits are divided by it
    std::size_t top_k = 50;           // keep the k largest logits (and ties with the k-th); 0: all (HF's default is 50)
    double top_p = 1.0;               // (0, 1]: keep the fewest largest whose probabilities reach top_p
    double repetition_penalty = 1.0;  // > 0: a seen token's logit divided by it when positive, multiplied when negative
};

// ValueError naming the setting: repetition_penalty ≤ 0 or not finite; when sampling, temperature ≤ 0
// or not finite, top_p outside (0, 1].
void check(const Sampling& sampling);

// The logits after the repetition penalty over the `seen` tokens (each counted once, as HF's gather).
std::vector<double> penalized(std::span<const float> logits, std::span<const std::int64_t> seen, double penalty);

// The probability of each token that sampling draws from: softmax of the penalized logits divided by the
// temperature, with top-k and then top-p applied, renormalised (zeros for the tokens removed).
std::vector<double> distribution(std::span<const float> logits, const Sampling& sampling, std::span<const std::int64_t> seen);

// The next token: the first largest penalized logit when greedy; else a draw from distribution() by
// one uniform number of `rng` (inverse CDF in token order), so the same generator state gives the same token.
std::int64_t choose(std::span<const float> logits, const Sampling& sampling, std::span<const std::int64_t> seen, Generator& rng);

}  // namespace remat::generation
