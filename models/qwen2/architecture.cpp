#include "models/qwen2/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::qwen2 {

models::Architecture causal_lm_entry() { return models::architecture_of<ForCausalLM>(); }

}  // namespace remat::qwen2
