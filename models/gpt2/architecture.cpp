#include "models/gpt2/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::gpt2 {

models::Architecture LMHead::entry() { return models::architecture_of<LMHead>(); }

models::Summary LMHead::summary(const Config& c) {
    return {{c.n_layer, c.n_embd, c.n_head, c.vocab_size, c.n_positions}, 0, c.resid_pdrop};
}

void LMHead::set_sizes(Config& c, const models::SizeRequest& r) {
    if (r.n_layer) c.n_layer = *r.n_layer;
    if (r.n_embd) c.n_embd = *r.n_embd;
    if (r.n_head) c.n_head = *r.n_head;
    if (r.vocab_size) c.vocab_size = *r.vocab_size;
    if (r.n_positions) c.n_positions = *r.n_positions;
}

}  // namespace remat::gpt2
