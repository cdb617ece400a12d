#include "models/mistral/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::mistral {

models::Architecture ForCausalLM::entry() { return models::architecture_of<ForCausalLM>(); }

}  // namespace remat::mistral
