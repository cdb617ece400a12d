#include "models/llama/architecture.hpp"

#include "models/architecture_of.hpp"

namespace remat::llama {

models::Architecture causal_lm_entry() { return models::architecture_of<ForCausalLM>(); }

std::unique_ptr<models::Model> make_model(const Settings& settings, Generator& init,
                                          std::shared_ptr<Generator> dropout_rng, const Policy& policy) {
    auto model = set_checkpointing(create(settings, init, std::move(dropout_rng)), policy);
    return std::make_unique<models::detail::ModelOf<ForCausalLM, decltype(model)>>(std::move(model));
}

}  // namespace remat::llama
