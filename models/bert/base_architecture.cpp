#include "models/architecture_of.hpp"
#include "models/bert/architecture.hpp"

namespace remat::bert {

models::Architecture base_entry() { return models::architecture_of<Base>(); }

}  // namespace remat::bert
