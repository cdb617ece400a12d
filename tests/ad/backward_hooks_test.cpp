// Tape::set_backward_hooks: a leaf is reported final exactly once, as soon as backward has made its
// last contribution to it — never before (its gradient then is its final gradient, to the bit) —
// including leaves read by several checkpointed regions, nested regions and a leaf that is both a
// region's input and read after the region.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
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
                                 .leaf_final_except_rows = nullptr,  // tables then count as final only once whole
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

// A tied embedding (looked up, then the output layer's weight) and a table only looked up: once
// the lookups are all a table has left, every other row is final — reported with exactly the rows
// the lookups read, and those rows alone change afterwards. Also with the lookups inside a region.
TEST_CASE("backward hooks: a table whose only uses left are lookups is final except at their rows") {
    const std::size_t V = 12, C = 5, T = 6;
    Tensor tokens = random_tensor({V, C}, 30, 0.5f);
    Tensor positions = random_tensor({T + 2, C}, 31, 0.5f);
    IdTensor ids = IdTensor::from_shape({2, T});
    const std::int64_t picked[] = {3, 7, 3, 0, 11, 7, 7, 5, 3, 0, 2, 11};  // repeats; rows 1, 4, 6, 8–10 unread
    std::copy(std::begin(picked), std::end(picked), ids.data());
    IdTensor where = IdTensor::from_shape({T});
    for (std::size_t t = 0; t < T; ++t) where.data()[t] = static_cast<std::int64_t>(T - t);  // rows 1..6 of 8
    std::vector<Tensor*> wrt = {&tokens, &positions};

    auto& tape = ad::default_tape();
    for (bool in_region : {false, true}) {
        CAPTURE(in_region);
        auto loss = [&] {
            auto embed = [&](const std::vector<Var>&) {
                return ops::embedding(ad::leaf(tokens), ids) + ops::embedding(ad::leaf(positions), where);
            };
            Var h = in_region ? ad::checkpointed(embed, {}) : embed({});
            h = ops::tanh(h);
            Var logits = ops::matmul(h, ad::leaf(tokens), false, true);  // the output layer: every row of `tokens`
            return ops::sum(logits * logits);
        };
        const ad::Gradient plain = ad::gradient(loss, wrt);

        std::map<const Tensor*, std::vector<std::int64_t>> rows_left;
        std::map<const Tensor*, Report> early, final;
        std::size_t ops_done = 0;
        tape.reset();
        tape.clear_grads();
        tape.set_backward_hooks({.leaf_final =
                                     [&](const Tensor& leaf) {
                                         const Tensor* g = tape.grad(leaf);
                                         final[&leaf] = {g ? std::optional(*g) : std::nullopt, ops_done, final.size()};
                                     },
                                 .leaf_final_except_rows =
                                     [&](const Tensor& leaf, std::span<const std::int64_t> rows) {
                                         CHECK(!rows_left.count(&leaf));
                                         rows_left[&leaf].assign(rows.begin(), rows.end());
                                         const Tensor* g = tape.grad(leaf);
                                         early[&leaf] = {g ? std::optional(*g) : std::nullopt, ops_done, 0};
                                     },
                                 .progress = [&] { ++ops_done; }});
        Var l = loss();
        tape.backward(l);
        tape.set_backward_hooks({});

        CHECK(rows_left[&tokens] == std::vector<std::int64_t>{0, 2, 3, 5, 7, 11});
        CHECK(rows_left[&positions] == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
        for (std::size_t i = 0; i < wrt.size(); ++i) {
            CAPTURE(i);
            const Tensor* leaf = wrt[i];
            REQUIRE(final.count(leaf));
            REQUIRE(final[leaf].gradient);
            CHECK(test::same_bits(*final[leaf].gradient, plain.grads[i]));
            CHECK(early[leaf].after_ops < final[leaf].after_ops);
            // The rows not listed were final when reported (zeros if no gradient existed yet).
            const std::vector<std::int64_t>& listed = rows_left[leaf];
            for (std::size_t r = 0; r < leaf->shape()[0]; ++r) {
                if (std::find(listed.begin(), listed.end(), static_cast<std::int64_t>(r)) != listed.end()) continue;
                CAPTURE(r);
                for (std::size_t c = 0; c < C; ++c) {
                    const float then = early[leaf].gradient ? early[leaf].gradient->data()[r * C + c] : 0.0f;
                    CHECK(std::bit_cast<std::uint32_t>(then) == std::bit_cast<std::uint32_t>(plain.grads[i].data()[r * C + c]));
                }
            }
        }
        CHECK(early[&positions].after_ops <= (in_region ? ops_done : 0));  // only ever looked up: from the start
        CHECK(early[&tokens].after_ops > 0);                                  // after the output layer's backward
        tape.clear_grads();
    }
}
