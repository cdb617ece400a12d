#include "models/bert/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::bert {

models::Architecture MaskedLM::entry() { return models::architecture_of<MaskedLM>(); }
models::Architecture Base::entry() { return models::architecture_of<Base>(); }

models::Summary Facts::summary(const Config& c) {
    return {{c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.vocab_size, c.max_position_embeddings},
            c.type_vocab_size,
            c.hidden_dropout_prob};
}

void Facts::set_sizes(Config& c, const models::SizeRequest& r) {
    if (r.n_layer) c.num_hidden_layers = *r.n_layer;
    if (r.n_embd) {
        c.hidden_size = *r.n_embd;
        c.intermediate_size = 4 * c.hidden_size;
    }
    if (r.n_head) c.num_attention_heads = *r.n_head;
    if (r.vocab_size) c.vocab_size = *r.vocab_size;
    if (r.n_positions) c.max_position_embeddings = *r.n_positions;
}

}  // namespace remat::bert
