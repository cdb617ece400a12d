// Tape::set_backward_hooks: a leaf is reported final exactly once, as soon as backward has made its
// last contribution to it — never before (its gradient then is its final gradient, to the bit) —
// including leaves read by several checkpointed regions, nested regions and a leaf that is both a
// region's input and read after the region.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/core/random.hpp"
#include "remat/ops.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/random_tensor.hpp"

using namespace remat;

namespace {
using test::random_tensor;

struct TanhBlock {
    Tensor w, b;
    Var operator()(const Var& x) const {
        return x + ops::tanh(ops::linear(x, ad::leaf(w), ad::leaf(b), ops::WeightLayout::out_in));
    }
};

struct Report {
    std::optional<Tensor> gradient;  // as it was when reported
    std::size_t after_ops = 0;       // progress() calls before the report
    std::size_t order = 0;
};
}  // namespace

TEST_CASE("backward hooks: each leaf reported once, when its gradient is final") {
    const std::size_t C = 6;
    // Blocks 0, 1, 2 and then block 1 again: its weights are read by two regions.
    std::vector<TanhBlock> blocks;
    for (std::uint64_t l = 0; l < 3; ++l) blocks.push_back({random_tensor({C, C}, 10 + l, 0.4f), random_tensor({C}, 20 + l, 0.1f)});
    const std::size_t sequence[] = {0, 1, 2, 1};
    Tensor input = random_tensor({4, C}, 5);
    Tensor unused = random_tensor({3}, 6);  // a leaf whose only use needs no gradient
    std::vector<Tensor*> wrt = {&input};
    for (TanhBlock& b : blocks) wrt.insert(wrt.end(), {&b.w, &b.b});

    auto& tape = ad::default_tape();
    for (int depth : {0, 1, 2}) {  // plain; each block checkpointed; pairs checkpointed with blocks inside
        CAPTURE(depth);
        auto loss = [&] {
            Var x = ad::leaf(input);
            Var h = x;
            auto block = [&](std::size_t k) { return [&blocks, k](const std::vector<Var>& in) { return blocks[k](in[0]); }; };
            if (depth == 0) {
                for (std::size_t k : sequence) h = blocks[k](h);
            } else if (depth == 1) {
                for (std::size_t k : sequence) h = ad::checkpointed(block(k), {h});
            } else {
                for (std::size_t p = 0; p < 4; p += 2)
                    h = ad::checkpointed(
                        [&sequence, block, p](const std::vector<Var>& in) {  // outlives loss(): by value
                            Var a = ad::checkpointed(block(sequence[p]), in);
                            return ad::checkpointed(block(sequence[p + 1]), {a});
                        },
                        {h});
            }
            {
                ad::NoGrad off;
                (void)ops::sum(ad::leaf(unused));
            }
            return ops::sum(h * x);  // the input is read again after every region
        };
        const ad::Gradient plain = ad::gradient(loss, wrt);

        std::map<const Tensor*, Report> reports;
        std::size_t ops_done = 0, duplicates = 0;
        tape.reset();
        tape.clear_grads();
        tape.set_backward_hooks({.leaf_final =
                                     [&](const Tensor& leaf) {
                                         duplicates += reports.count(&leaf);
                                         const Tensor* g = tape.grad(leaf);
                                         reports[&leaf] = {g ? std::optional(*g) : std::nullopt, ops_done, reports.size()};
                                     },
                                 .progress = [&] { ++ops_done; }});
        Var l = loss();
        tape.backward(l);
        tape.set_backward_hooks({});

        CHECK(duplicates == 0);
        CHECK(reports.size() == wrt.size());  // `unused` was never recorded
        for (std::size_t i = 0; i < wrt.size(); ++i) {
            CAPTURE(i);
            REQUIRE(reports.count(wrt[i]));
            const Report& r = reports[wrt[i]];
            REQUIRE(r.gradient);
            CHECK(test::same_bits(*r.gradient, plain.grads[i]));        // nothing was added after the report
            CHECK(test::same_bits(*tape.grad(*wrt[i]), plain.grads[i]));  // and the hooks changed nothing
        }
        // Backward finishes block 2 first, then block 1 (after its earlier use too), then block 0, and
        // the input last; block 2 is reported with a quarter of backward still to run.
        CHECK(reports[&blocks[2].w].order < reports[&blocks[1].w].order);
        CHECK(reports[&blocks[1].w].order < reports[&blocks[0].w].order);
        CHECK(reports[&blocks[0].w].after_ops <= reports[&input].after_ops);
        CHECK(reports[&blocks[2].b].after_ops * 4 < ops_done * 3);
        tape.clear_grads();
    }
}
