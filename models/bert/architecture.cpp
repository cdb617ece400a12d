#include "models/bert/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::bert {

models::Architecture MaskedLM::entry() { return models::architecture_of<MaskedLM>(); }
models::Architecture Base::entry() { return models::architecture_of<Base>(); }

models::Summary Facts::summary(const Config& c) {
    return {models::sizes_of(c, size_members), c.type_vocab_size, c.hidden_dropout_prob};
}

}  // namespace remat::bert
