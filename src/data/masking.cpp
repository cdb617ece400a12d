#include "remat/data/masking.hpp"

#include <algorithm>
#include <cmath>

#include "remat/core/error.hpp"

namespace remat::data {

namespace {

constexpr std::uint64_t mask_stream = 0x6d61736b;  // "mask": apart from other forks of the run's seed

// P(bits < threshold(p)) = p, to 2^-32, for 32 uniform bits.
std::uint64_t threshold(double p) { return static_cast<std::uint64_t>(std::llround(std::ldexp(p, 32))); }

}  // namespace

Generator masking_generator(const MaskingKey& key) {
    return Generator(key.seed).fork(mask_stream).fork(key.step).fork(key.micro_batch);
}

MaskedBatch mask_tokens(const IdTensor& input_ids, const MaskingRule& rule, const MaskingKey& key) {
    if (input_ids.dimension() != 2)
        throw ValueError("mask_tokens: input_ids must be (B, T), got " + to_string(input_ids.shape()));
    if (input_ids.size() == 0) throw ValueError("mask_tokens: empty batch " + to_string(input_ids.shape()));
    if (rule.vocab_size <= 0) throw ValueError("mask_tokens: vocab_size must be positive, got " + std::to_string(rule.vocab_size));
    if (rule.mask_id < 0 || rule.mask_id >= rule.vocab_size)
        throw ValueError("mask_tokens: mask_id " + std::to_string(rule.mask_id) + " is outside the vocabulary [0, " +
                         std::to_string(rule.vocab_size) + ")");
    if (!(rule.mlm_probability >= 0.0 && rule.mlm_probability <= 1.0))
        throw ValueError("mask_tokens: mlm_probability must be in [0, 1], got " + std::to_string(rule.mlm_probability));

    const std::size_t T = input_ids.shape()[1];
    const std::int64_t* ids = input_ids.data();
    MaskedBatch out{input_ids, IdTensor(input_ids.shape(), ignore_label)};
    std::int64_t* inputs = out.input_ids.data();  // (B, T)
    std::int64_t* labels = out.labels.data();     // (B, T)

    const std::uint64_t select = threshold(rule.mlm_probability), replace = threshold(0.8), random = threshold(0.5);
    const Generator::State s = masking_generator(key).state();
    const auto vocab = static_cast<unsigned __int128>(rule.vocab_size);
    for (std::size_t i = 0; i < input_ids.size(); ++i) {
        const std::int64_t id = ids[i];
        if (id < 0 || id >= rule.vocab_size)
            throw ValueError("mask_tokens: token id " + std::to_string(id) + " at (" + std::to_string(i / T) + ", " +
                             std::to_string(i % T) + ") is outside the vocabulary [0, " + std::to_string(rule.vocab_size) + ")");
        if (std::find(rule.special_ids.begin(), rule.special_ids.end(), id) != rule.special_ids.end()) continue;
        // Every token draws its own two blocks, selected or not: no draw depends on another token's.
        const auto coins = block_bits(s, 2 * i);
        if (coins[0] >= select) continue;
        labels[i] = id;
        if (coins[1] < replace) {
            inputs[i] = rule.mask_id;
        } else if (coins[2] < random) {
            const auto word = block_bits(s, 2 * i + 1);
            const std::uint64_t bits = std::uint64_t{word[0]} | std::uint64_t{word[1]} << 32;
            inputs[i] = static_cast<std::int64_t>((bits * vocab) >> 64);  // uniform in [0, vocab) to 2^-64
        }
    }
    return out;
}

std::vector<std::int64_t> bert_window(std::span<const std::int64_t> run, std::int64_t cls_id, std::int64_t sep_id) {
    std::vector<std::int64_t> window;
    window.reserve(run.size() + 2);
    window.push_back(cls_id);
    window.insert(window.end(), run.begin(), run.end());
    window.push_back(sep_id);
    return window;
}

}  // namespace remat::data
