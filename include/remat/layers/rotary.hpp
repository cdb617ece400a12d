#pragma once
// Rotary position embeddings as HF computes them (modeling_rope_utils.py, LlamaRotaryEmbedding):
// inverse frequencies 1/θ^(2i/D) for i < D/2, rescaled by rope_scaling, then per position t the
// angles t·inv_freq, duplicated to D columns ([freqs, freqs]), as cos and sin tables that
// ops::rotary applies to q and k. Computed in double and rounded once (HF: float32 throughout).
#include <cstddef>
#include <memory>
#include <vector>

#include "remat/core/tensor.hpp"

namespace remat::nn {

// HF's rope_scaling, the types remat implements ("rope_type", older files "type").
struct RopeScaling {
    enum class Type { none, linear, llama3 };
    Type type = Type::none;
    double factor = 1.0;                            // linear, llama3
    double low_freq_factor = 1.0;                   // llama3
    double high_freq_factor = 4.0;                  // llama3
    double original_max_position_embeddings = 8192;  // llama3
    bool operator==(const RopeScaling&) const = default;
};

// inv_freq (D/2 values) for head_dim D: linear divides every frequency by factor; llama3 divides
// the low frequencies (wavelength > original/low_freq_factor) by factor, keeps the high ones
// (wavelength < original/high_freq_factor) and blends the band between.
std::vector<double> rope_inverse_frequencies(std::size_t head_dim, double theta, const RopeScaling& scaling);

struct RotaryTables {
    std::shared_ptr<const Tensor> cos, sin;  // (T, D) or (B, T, D): shared, so checkpointed blocks keep them cheaply
};

// The tables for positions 0 … T−1.
RotaryTables rotary_tables(const std::vector<double>& inv_freq, std::size_t T);
// The tables for the position ids (B, T) of each sequence: (B, T, D).
RotaryTables rotary_tables(const std::vector<double>& inv_freq, const IdTensor& positions);

// The frequencies a model holds (HF's rotary_emb; not a parameter, never saved): an opaque leaf.
struct RotaryEmbedding {
    std::vector<double> inv_freq;
    static constexpr const char* name = "RotaryEmbedding";
    RotaryTables tables(std::size_t T) const { return rotary_tables(inv_freq, T); }
    RotaryTables tables(const IdTensor& positions) const { return rotary_tables(inv_freq, positions); }
};

}  // namespace remat::nn
