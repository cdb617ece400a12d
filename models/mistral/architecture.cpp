#include "models/mistral/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::mistral {

models::Architecture causal_lm_entry() { return models::architecture_of<ForCausalLM>(); }

}  // namespace remat::mistral
