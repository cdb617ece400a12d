#include "models/bert/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::bert {

// BertModel's entry is in base_architecture.cpp: each entry instantiates a whole model, and two
// sources compile side by side.
models::Architecture masked_lm_entry() { return models::architecture_of<MaskedLM>(); }

models::Summary Facts::summary(const Config& c) {
    return {models::sizes_of(c, size_members), c.type_vocab_size, c.hidden_dropout_prob};
}

}  // namespace remat::bert
