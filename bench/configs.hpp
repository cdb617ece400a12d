#pragma once
// The benchmarks' models, built from their sizes alone (dropout 0).
#include <cstddef>

#include "models/gpt2/gpt2.hpp"
#include "models/llama/llama.hpp"

namespace remat::bench {

inline gpt2::Config gpt2_config(std::size_t L, std::size_t C, std::size_t H, std::size_t V, std::size_t positions) {
    gpt2::Config c;
    c.n_layer = L;
    c.n_embd = C;
    c.n_head = H;
    c.vocab_size = V;
    c.n_positions = positions;
    c.resid_pdrop = c.embd_pdrop = c.attn_pdrop = 0.0f;
    return c;
}

// A Llama of SmolLM2-135M's shape: L30 C576, 9 heads, 3 KV heads, intermediate 1536, V49152, tied.
inline llama::Settings llama_settings(std::size_t L, std::size_t C, std::size_t H, std::size_t kv_heads, std::size_t intermediate,
                                      std::size_t V, double rope_theta) {
    llama::Settings s;
    s.fields.num_hidden_layers = L;
    s.fields.hidden_size = C;
    s.fields.num_attention_heads = H;
    s.fields.num_key_value_heads = kv_heads;
    s.fields.intermediate_size = intermediate;
    s.fields.vocab_size = V;
    s.fields.max_position_embeddings = 8192;
    s.fields.rope_theta = rope_theta;
    s.fields.rms_norm_eps = 1e-5;
    s.fields.tie_word_embeddings = true;
    return s;
}
inline llama::Settings smollm_settings(double rope_theta) { return llama_settings(30, 576, 9, 3, 1536, 49152, rope_theta); }

}  // namespace remat::bench
