// expect: a layer holds a Generator by value
// A layer drawing from a Generator it holds by value: checkpointing could not put it back before the
// recomputation, which would draw other numbers than the forward (silently different gradients).
#include "common.hpp"

struct NoisyBlock {
    BOOST_HANA_DEFINE_STRUCT(NoisyBlock, (nn::Linear, fc), (Generator, noise));
    static constexpr bool is_block = true;
    Var operator()(const Var& x) const { return x + fc(x); }
};

namespace demo {
REMAT_MODEL(Net, (NoisyBlock, b1), (NoisyBlock, b2))
    static constexpr const char* name = "Net";
    Var operator()(const Var& x) { return b2(b1(x)); }
};
}  // namespace demo

int main() {
    demo::Net net;
    auto checkpointed = set_checkpointing(std::move(net));
    const Var y = checkpointed(Var(zeros({2, 4})));
    (void)y;
}
