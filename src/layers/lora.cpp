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

Var LoRA::operator()(const Var& x) const {
    const Var down = ops::linear(lora_dropout(x), leaf(lora_A.weight), Var(), ops::WeightLayout::out_in);
    return ops::linear(down, leaf(lora_B.weight), Var(), ops::WeightLayout::out_in) * scaling;
}

}  // namespace remat::nn
