// expect: has a call operator but no reflected members
// The struct, with no reflection at all: walks would see a leaf and checkpoint nothing.
#include "common.hpp"

struct Net {
    nn::Linear embed;
    Block b1, b2;
    nn::Linear head;
    Var operator()(const Var& x) const { return head(b2(b1(embed(x)))); }
};

int main() {
    Net net;
    auto checkpointed = set_checkpointing(std::move(net));
    (void)checkpointed;
}
