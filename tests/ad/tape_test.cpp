#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "remat/ad/finite_difference.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/error.hpp"
#include "remat/core/random.hpp"
#include "remat/ops.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/random_tensor.hpp"

using namespace remat;

namespace {
using test::random_tensor;

// A two-layer residual MLP block: x + W2·gelu(W1·x + b1) + b2, with dropout on the branch.
struct Block {
    Tensor w1, b1, w2, b2;
    Generator* rng = nullptr;
    float p = 0.0f;
    Var operator()(const Var& x) const {
        Var h = ops::gelu_tanh(ops::linear(x, ad::leaf(w1), ad::leaf(b1), ops::WeightLayout::out_in));
        if (p > 0) h = ops::dropout(h, p, *rng);
        return x + ops::linear(h, ad::leaf(w2), ad::leaf(b2), ops::WeightLayout::out_in);
    }
};

Block make_block(std::size_t C, std::uint64_t seed) {
    return {random_tensor({2 * C, C}, seed, 0.3f), random_tensor({2 * C}, seed + 1, 0.1f),
            random_tensor({C, 2 * C}, seed + 2, 0.3f), random_tensor({C}, seed + 3, 0.1f)};
}

std::vector<Tensor*> parameters(std::vector<Block>& blocks) {
    std::vector<Tensor*> ps;
    for (auto& b : blocks)
        for (Tensor* t : {&b.w1, &b.b1, &b.w2, &b.b2}) ps.push_back(t);
    return ps;
}
}  // namespace

TEST_CASE("tape backend") {
    auto& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();

    SUBCASE("no-grad records nothing") {
        Tensor w = random_tensor({3, 3}, 1);
        ad::NoGrad no_grad;
        Var y = ops::sum(ops::tanh(ad::leaf(w)));
        CHECK_FALSE(y.requires_grad());
        CHECK(tape.node_count() == 0);
    }

    SUBCASE("recorded kinds") {
        Tensor w = random_tensor({3, 3}, 1);
        Var y = ops::sum(ops::tanh(ops::matmul(ad::leaf(w), ad::leaf(w))));
        CHECK(tape.recorded_kinds() ==
              std::vector<ad::OpKind>{ad::OpKind::matmul, ad::OpKind::activation, ad::OpKind::reduction});
        tape.reset();
    }

    SUBCASE("a projection to fewer features is a narrowing one (selective checkpointing keeps it)") {
        const Tensor x = random_tensor({2, 4}, 1), w_up = random_tensor({4, 8}, 2), w_same = random_tensor({8, 8}, 3),
                     w_down = random_tensor({8, 4}, 4);  // (in, out)
        Var up = ops::linear(ad::leaf(x), ad::leaf(w_up), Var(), ops::WeightLayout::in_out);
        Var same = ops::linear(up, ad::leaf(w_same), Var(), ops::WeightLayout::in_out);
        Var down = ops::linear(same, ad::leaf(w_down), Var(), ops::WeightLayout::in_out);
        CHECK(tape.recorded_kinds() ==
              std::vector<ad::OpKind>{ad::OpKind::projection, ad::OpKind::projection, ad::OpKind::narrowing});
        tape.reset();
    }

    SUBCASE("leaf gradients accumulate across backward calls until zero_grad") {
        Tensor w = random_tensor({4}, 2);
        for (int i = 0; i < 2; ++i) tape.backward(ops::sum(ad::leaf(w) * ad::leaf(w)));
        for (std::size_t i = 0; i < 4; ++i) CHECK((*tape.grad(w))(i) == doctest::Approx(4 * w(i)));
        tape.zero_grad();
        CHECK((*tape.grad(w))(0) == 0.0f);
        tape.backward(ops::sum(ad::leaf(w)));
        CHECK((*tape.grad(w))(0) == 1.0f);
    }

    SUBCASE("parameters get gradients although the input requires none") {
        Tensor w = random_tensor({3, 2}, 3);
        Var x(random_tensor({5, 3}, 4));  // a constant input, as after a frozen embedding
        CHECK_FALSE(x.requires_grad());
        tape.backward(ops::sum(ops::matmul(x, ad::leaf(w))));
        REQUIRE(tape.grad(w) != nullptr);
        // d/dW sum(x·W) = column sums of x, repeated over W's columns.
        for (std::size_t k = 0; k < 3; ++k) {
            float column = 0;
            for (std::size_t i = 0; i < 5; ++i) column += x.value()(i, k);
            CHECK((*tape.grad(w))(k, 1) == doctest::Approx(column));
        }
    }

    SUBCASE("a value from before backward cannot be differentiated again") {
        Tensor w = random_tensor({4}, 5);
        Var y = ops::tanh(ad::leaf(w));
        tape.backward(ops::sum(y));
        CHECK_THROWS_WITH_AS(ops::sum(y), doctest::Contains("recorded before the last backward"), std::logic_error);
    }

    SUBCASE("backward needs a one-element loss") {
        Tensor w = random_tensor({4}, 5);
        Var y = ops::tanh(ad::leaf(w));
        CHECK_THROWS_WITH_AS(tape.backward(y), "backward: the loss must have exactly one element, got shape (4,)", ShapeError);
        tape.backward(ops::sum(y));  // the recording survives the refused call
        CHECK((*tape.grad(w))(0) == doctest::Approx(1 - std::tanh(w(0)) * std::tanh(w(0))));
    }

    SUBCASE("gradient() returns the gradient of one call and leaves accumulated ones alone") {
        Tensor w = random_tensor({4}, 6), unused = random_tensor({2}, 7);
        tape.backward(ops::sum(ad::leaf(w)));
        Tensor* wrt[] = {&w, &unused};
        auto result = ad::gradient([&] { return ops::sum(ad::leaf(w) * ad::leaf(w)); }, wrt);
        CHECK(result.grads[0](1) == doctest::Approx(2 * w(1)));
        CHECK(result.grads[1](0) == 0.0f);  // unused: zeros of its shape
        CHECK((*tape.grad(w))(1) == 1.0f);
    }
}

TEST_CASE("checkpointed regions give bitwise identical gradients") {
    auto& tape = ad::default_tape();
    tape.reset();
    const std::size_t C = 8, L = 4;
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        for (float p : {0.0f, 0.1f, 0.5f}) {
            CAPTURE(seed);
            CAPTURE(p);
            std::vector<Block> blocks;
            Generator rng(seed * 100);
            for (std::size_t l = 0; l < L; ++l) {
                blocks.push_back(make_block(C, seed * 10 + l * 4));
                blocks.back().rng = &rng;
                blocks.back().p = p;
            }
            Tensor input = random_tensor({3, 5, C}, seed + 77);
            auto wrt = parameters(blocks);
            wrt.push_back(&input);

            // depth 0: plain; 1: every block checkpointed; 2: pairs of blocks checkpointed, blocks inside too.
            // Closures outlive the loss function (they run again in backward): capture no locals of it.
            // Snapshot and restore of the generator are the caller's job (Checkpointed<T>'s): the
            // first call is the forward and advances the generator; later calls are recomputations
            // and put the live generator back where they found it.
            auto f = [&](const std::size_t k) {
                const auto state = rng.state();
                return [&blocks, &rng, k, state, first = true](const std::vector<Var>& in) mutable {
                    const auto live = rng.state();
                    rng.set_state(state);
                    Var out = blocks[k](in[0]);
                    if (!first) rng.set_state(live);
                    first = false;
                    return out;
                };
            };
            auto run = [&](int depth) {
                rng.seed(seed * 100);
                return ad::gradient(
                    [&] {
                        Var h = ad::leaf(input);
                        for (std::size_t l = 0; l < L; l += 2) {
                            if (depth == 0) {
                                h = blocks[l + 1](blocks[l](h));
                            } else if (depth == 1) {
                                h = ad::checkpointed(f(l), {h});
                                h = ad::checkpointed(f(l + 1), {h});
                            } else {
                                const auto state = rng.state();
                                h = ad::checkpointed(
                                    [&rng, &f, l, state, first = true](const std::vector<Var>& in) mutable {
                                        const auto live = rng.state();
                                        rng.set_state(state);
                                        Var a = ad::checkpointed(f(l), in);
                                        Var b = ad::checkpointed(f(l + 1), {a});
                                        if (!first) rng.set_state(live);
                                        first = false;
                                        return b;
                                    },
                                    {h});
                            }
                        }
                        // The stream also feeds a residual outside the checkpoints.
                        return ops::sum(ops::tanh(h) + h * h);
                    },
                    wrt);
            };
            const auto plain = run(0);
            const auto rng_after_plain = rng.state();
            for (int depth : {1, 2}) {
                CAPTURE(depth);
                const auto ckpt = run(depth);
                CHECK(ckpt.loss == plain.loss);
                for (std::size_t i = 0; i < wrt.size(); ++i) CHECK(test::same_bits(ckpt.grads[i], plain.grads[i]));
                CHECK(rng.state() == rng_after_plain);
            }
        }
    }
}

TEST_CASE("checkpointed regions") {
    auto& tape = ad::default_tape();
    tape.reset();
    std::vector<Block> blocks{make_block(4, 1)};
    Tensor input = random_tensor({2, 4}, 9);

    SUBCASE("keep only their inputs: the forward records one node") {
        Var h = ad::checkpointed([&](const std::vector<Var>& in) { return blocks[0](in[0]); }, {ad::leaf(input)});
        CHECK(tape.recorded_kinds() == std::vector<ad::OpKind>{ad::OpKind::checkpoint});
        tape.reset();
    }

    SUBCASE("under no-grad they run the region and record nothing") {
        ad::NoGrad no_grad;
        Var h = ad::checkpointed([&](const std::vector<Var>& in) { return blocks[0](in[0]); }, {ad::leaf(input)});
        CHECK(tape.node_count() == 0);
        CHECK_FALSE(h.requires_grad());
    }

    SUBCASE("an exception in the forward propagates and leaves the tape usable") {
        Tensor wrong = random_tensor({2, 3}, 10);
        const std::size_t before = tape.node_count();
        CHECK_THROWS_WITH_AS(
            ad::checkpointed([&](const std::vector<Var>& in) { return blocks[0](in[0]); }, {ad::leaf(wrong)}),
            doctest::Contains("linear: input features (2, 3)"), ShapeError);
        CHECK(tape.node_count() == before);
        CHECK(tape.recording());
        Tensor* wrt[] = {&input};
        auto g = ad::gradient([&] { return ops::sum(blocks[0](ad::leaf(input))); }, wrt);
        CHECK(g.grads[0].size() == input.size());
    }

    SUBCASE("an exception during recomputation propagates and leaves the tape usable") {
        int calls = 0;
        Tensor* wrt[] = {&input};
        auto failing = [&] {
            return ops::sum(ad::checkpointed(
                [&](const std::vector<Var>& in) {
                    if (++calls == 2) throw std::runtime_error("recompute failed");
                    return blocks[0](in[0]);
                },
                {ad::leaf(input)}));
        };
        CHECK_THROWS_WITH(ad::gradient(failing, wrt), "recompute failed");
        CHECK(tape.node_count() == 0);
        CHECK_FALSE(tape.recomputing());
        auto g = ad::gradient(failing, wrt);  // calls == 3, 4 from here on: succeeds
        CHECK(g.grads[0].size() == input.size());
    }
}

TEST_CASE("finite-difference backend agrees with the tape") {
    std::vector<Block> blocks{make_block(3, 21), make_block(3, 25)};
    Tensor input = random_tensor({2, 3}, 30);
    auto wrt = parameters(blocks);
    wrt.push_back(&input);
    auto loss = [&] {
        Var h = ad::leaf(input);
        h = ad::checkpointed([&](const std::vector<Var>& in) { return blocks[0](in[0]); }, {h});
        h = blocks[1](h);
        return ops::mean(ops::tanh(h));
    };
    const auto exact = ad::gradient(loss, wrt);
    ad::FiniteDifference fd(1e-2f);
    ad::Gradient approx;
    {
        ad::UseBackend use(fd);
        CHECK(ad::current().name() == "finite-difference");
        approx = ad::gradient(loss, wrt);
    }
    CHECK(ad::current().name() == "tape");
    CHECK(approx.loss == exact.loss);
    for (std::size_t i = 0; i < wrt.size(); ++i)
        for (std::size_t j = 0; j < wrt[i]->size(); ++j)
            CHECK(approx.grads[i].data()[j] == doctest::Approx(exact.grads[i].data()[j]).epsilon(2e-2).scale(1e-2));
}
