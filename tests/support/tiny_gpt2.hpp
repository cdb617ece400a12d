#pragma once
// The tests' small GPT-2: 50 ids, 12 positions, 16 features, 4 heads; layers and dropout as asked.
#include "models/gpt2/gpt2.hpp"

namespace remat::test {

inline gpt2::Config tiny_gpt2(std::size_t n_layer = 4, double dropout = 0.1) {
    gpt2::Config c;
    c.vocab_size = 50;
    c.n_positions = 12;
    c.n_embd = 16;
    c.n_layer = n_layer;
    c.n_head = 4;
    c.resid_pdrop = c.embd_pdrop = c.attn_pdrop = dropout;
    return c;
}

}  // namespace remat::test
