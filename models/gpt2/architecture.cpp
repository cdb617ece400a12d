#include "models/gpt2/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::gpt2 {

models::Architecture lm_head_entry() { return models::architecture_of<LMHead>(); }

models::Summary LMHead::summary(const Config& c) { return {models::sizes_of(c, size_members), 0, c.resid_pdrop}; }

}  // namespace remat::gpt2
