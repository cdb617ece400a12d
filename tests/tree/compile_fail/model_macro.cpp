// expect: compiles
// REMAT_MODEL compiles with every compiler the project uses (clang 14 has no aggregate CTAD).
#include "common.hpp"

namespace demo {
REMAT_MODEL(Net, (nn::Linear, embed), (Block, b1), (Block, b2), (nn::Linear, head), (std::tuple<int, float>, extra))
    static constexpr const char* name = "Net";
    Var operator()(const Var& x) { return head(b2(b1(embed(x)))); }
};
}  // namespace demo

int main() {
    demo::Net net;
    auto checkpointed = set_checkpointing(std::move(net));
    static_assert(std::is_same_v<decltype(checkpointed), demo::BasicNet<nn::Linear, Checkpointed<Block>, Checkpointed<Block>,
                                                                        nn::Linear, std::tuple<int, float>>>);
    auto plain = unset_checkpointing(std::move(checkpointed));
    static_assert(std::is_same_v<decltype(plain), demo::Net>);
    return static_cast<int>(tree::summary(plain).size() == 0);
}
