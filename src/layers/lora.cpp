#include "remat/layers/lora.hpp"

#include <sstream>

#include "remat/ops/elementwise.hpp"
#include "remat/ops/linalg.hpp"

namespace remat::nn {

std::string LoRA::describe() const {
    std::ostringstream s;
    s << "LoRA(r=" << rank() << ", scaling=" << scaling;
    if (lora_dropout.p > 0) s << ", dropout=" << lora_dropout.p;
    s << ")";
    return s.str();
}

Var LoRA::add_to(const Var& y, const Var& x) const {
    // The scaling is applied to the rank-r activations rather than to the (…, out) update (exact when
    // it is a power of two, within rounding otherwise), and the update is added onto y in its product:
    // no (…, out)-sized tensor of its own, forward or backward.
    Var down = ops::linear(lora_dropout(x), leaf(lora_A.weight), Var(), ops::WeightLayout::out_in);
    if (scaling != 1.0f) down = down * scaling;
    return ops::add_linear(y, down, leaf(lora_B.weight), ops::WeightLayout::out_in);
}

}  // namespace remat::nn
