#include "remat/layers/lora.hpp"

#include <sstream>

namespace remat::nn {

std::string LoRA::describe() const {
    std::ostringstream s;
    s << "LoRA(r=" << rank() << ", scaling=" << scaling;
    if (lora_dropout.p > 0) s << ", dropout=" << lora_dropout.p;
    s << ")";
    return s.str();
}

ops::LowRank LoRA::update(const Var& x) const {
    // The dropout and A in one product (dropout(x) is never made), the scaling on its rank-r output
    // (exact when it is a power of two, within rounding otherwise); B's product is added inside the
    // wrapped layer's.
    const bool drops = lora_dropout.active();
    return {ops::dropout_linear(x, leaf(lora_A.weight), scaling, drops ? lora_dropout.p : 0.0f,
                                drops ? lora_dropout.rng.get() : nullptr),
            leaf(lora_B.weight)};
}

}  // namespace remat::nn
