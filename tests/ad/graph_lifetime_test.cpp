// A recorded graph lives as long as something can reach it — a Var, a recorded op reading it, a
// checkpoint region keeping its input — and is freed when nothing can, as PyTorch frees it.
#include <doctest/doctest.h>

#include <cstring>

#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/param.hpp"
#include "remat/ops.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/table_model.hpp"

using namespace remat;
using test::same_bits;

namespace {
// A GPT-2 of 4 blocks (50 ids, 12 positions, width 16), its dropouts at p ("0.1", "0.0").
std::unique_ptr<models::Model> dropout_gpt2(const char* p, std::uint64_t seed, const Policy& policy = Policy::none()) {
    return test::table_model("GPT2LMHeadModel",
                             {.n_layer = 4, .n_embd = 16, .n_head = 4, .vocab_size = 50, .n_positions = 12,
                              .fields = {{"resid_pdrop", p}, {"embd_pdrop", p}, {"attn_pdrop", p}}},
                             seed, policy);
}

IdTensor ids(std::int64_t offset = 0) {
    IdTensor t = IdTensor::from_shape({2, 6});
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = (static_cast<std::int64_t>(5 * i) + offset) % 50;
    return t;
}

void check_evaluation_passes_are_freed(models::Model& model) {
    auto& tape = ad::default_tape();
    tape.reset();
    { Var warm_up = test::logits_of(model, ids()); }  // first-use allocations are not the graph's
    const std::size_t nodes = tape.node_count(), bytes = memory::live_bytes();
    CHECK(nodes == 0);
    for (int i = 0; i < 100; ++i) {
        Var logits = test::logits_of(model, ids(i));  // outside no-grad: recorded, then dropped
        CHECK(tape.node_count() > nodes);
    }
    CHECK(tape.node_count() == nodes);
    CHECK(memory::live_bytes() == bytes);
}
}  // namespace

TEST_CASE("evaluation passes outside no-grad leave nothing on the tape") {
    SUBCASE("plain") {
        auto model = dropout_gpt2("0.1", 1);
        check_evaluation_passes_are_freed(*model);
    }
    SUBCASE("checkpointed, blocks") {
        auto model = dropout_gpt2("0.1", 1, Policy::blocks());
        check_evaluation_passes_are_freed(*model);
    }
    SUBCASE("checkpointed, sqrt, with the debug check") {
        auto model = dropout_gpt2("0.1", 1, Policy::sqrt());
        ad::default_tape().set_checkpoint_check(true);
        check_evaluation_passes_are_freed(*model);
        ad::default_tape().set_checkpoint_check(false);
    }
}

TEST_CASE("a graph is kept while anything reaches it") {
    auto& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();
    Tensor w = full(Shape{3}, 0.5f);

    SUBCASE("through the ops that read it") {
        Var loss;
        {
            Var h = ops::tanh(ad::leaf(w));
            loss = ops::sum(h * h);
        }  // h is gone, but loss reads it
        CHECK(tape.node_count() == 3);
        tape.backward(loss);
        const float t = std::tanh(0.5f);
        CHECK((*tape.grad(w))(0) == doctest::Approx(2 * t * (1 - t * t)));
    }
    SUBCASE("a freed graph behind a live one is released in place, and popped with it") {
        Var kept = ops::tanh(ad::leaf(w));
        { Var dropped = ops::sum(ops::tanh(kept * kept)); }
        CHECK(tape.node_count() == 1);  // the newest nodes, freed, are popped at once
        Var dropped = ops::sum(ops::tanh(kept * kept));
        Var newer = ops::sum(kept);
        dropped = Var();
        CHECK(tape.node_count() == 5);
        CHECK(tape.live_node_count() == 2);
        newer = Var();
        kept = Var();
        CHECK(tape.node_count() == 0);
    }
}

TEST_CASE("freeing unreachable graphs never changes a gradient bit") {
    auto& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();
    auto a = dropout_gpt2("0.0", 2), b = dropout_gpt2("0.0", 2);
    auto step = [&](models::Model& model, bool with_evaluations) {
        Var first = model.loss(test::logits_of(model, ids(1)), ids(1));
        if (with_evaluations)
            for (int i = 0; i < 3; ++i) Var dropped = test::logits_of(model, ids(i));  // freed between two live graphs
        Var second = model.loss(test::logits_of(model, ids(2)), ids(2));
        tape.backward(first + second);
    };
    step(*a, false);
    step(*b, true);
    const auto pa = a->parameters(), pb = b->parameters();
    REQUIRE(pa.size() == pb.size());
    for (std::size_t i = 0; i < pa.size(); ++i) {
        CAPTURE(i);
        REQUIRE(tape.grad(pa[i]->value) != nullptr);
        CHECK(same_bits(*tape.grad(pa[i]->value), *tape.grad(pb[i]->value)));
    }
    tape.clear_grads();
}

TEST_CASE("a parameter's gradient is never handed to a later tensor at the same address") {
    auto& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();
    for (std::size_t n : {4u, 8u, 2u, 16u, 4u}) {  // each Param dies at the end of its iteration
        CAPTURE(n);
        Param p{full(Shape{n}, 1.0f)};
        tape.backward(ops::sum(leaf(p) * leaf(p)));
        REQUIRE(tape.grad(p.value) != nullptr);
        CHECK(tape.grad(p.value)->shape() == Shape{n});
        CHECK((*tape.grad(p.value))(n - 1) == 2.0f);
    }
    tape.zero_grad();  // drops the gradients of the parameters that are gone
    tape.clear_grads();
}
