// expect: declare the struct with REMAT_MODEL
// A reflected plain struct holding blocks: set_checkpointing would have to change its members' types.
#include "common.hpp"

struct Net {
    BOOST_HANA_DEFINE_STRUCT(Net, (nn::Linear, embed), (Block, b1), (Block, b2), (nn::Linear, head));
    Var operator()(const Var& x) const { return head(b2(b1(embed(x)))); }
};

int main() {
    Net net;
    auto checkpointed = set_checkpointing(std::move(net));
    (void)checkpointed;
}
