// The checkpointing contract (../shared/design.md), points 1–4, under every policy, in fp32 and bf16.
#include <doctest/doctest.h>

#include <optional>

#include "remat/ad/tape.hpp"
#include "remat/checkpoint.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "remat/train/optimisers.hpp"
#include "tests/checkpoint/stack.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using namespace remat::test::checkpointing;
using test::same_bits;

namespace {
// Two identical models, one plain and one checkpointed, trained side by side for a few AdamW steps;
// every gradient, output, parameter, buffer and generator must agree bit for bit at every step.
void check_policy(const Policy& policy, std::uint64_t seed, float p, std::size_t layers = 4,
                  Precision precision = Precision::fp32) {
    CAPTURE(policy.to_string());
    CAPTURE(std::string(name(precision)));
    CAPTURE(seed);
    CAPTURE(p);
    auto rng_a = std::make_shared<Generator>(seed), rng_b = std::make_shared<Generator>(seed);
    auto plain = make_stack(seed, layers, p, rng_a);
    auto ckpt = set_checkpointing(make_stack(seed, layers, p, rng_b), policy);
    auto state_a = train::setup(train::AdamW{.lr = 1e-2f}, plain);
    auto state_b = train::setup(train::AdamW{.lr = 1e-2f}, ckpt);
    for (int step = 0; step < 3; ++step) {
        CAPTURE(step);
        const IdTensor ids = random_ids(seed * 10 + step);
        Tensor out_a, out_b;
        std::optional<Autocast> scope(precision);
        auto [loss_a, grads_a] = train::withgradient([&](auto& m) {
            Var y = m(ids);
            out_a = y.value();
            return ops::mean(y * y);
        }, plain);
        auto [loss_b, grads_b] = train::withgradient([&](auto& m) {
            Var y = m(ids);
            out_b = y.value();
            return ops::mean(y * y);
        }, ckpt);
        CHECK(same_bits(out_a, out_b));  // 2. forward outputs
        CHECK(loss_a == loss_b);
        const auto ga = tree::named_parameters(grads_a), gb = tree::named_parameters(grads_b);
        REQUIRE(ga.size() == gb.size());
        for (std::size_t i = 0; i < ga.size(); ++i) {  // 1. every gradient
            CAPTURE(ga[i].first);
            CHECK(ga[i].first == gb[i].first);
            CHECK(same_bits(ga[i].second->value, gb[i].second->value));
        }
        CHECK(rng_a->state() == rng_b->state());  // 3. the live stream is untouched
        scope.reset();  // parameters change outside the scope
        train::update(state_a, plain, grads_a);
        train::update(state_b, ckpt, grads_b);
        const auto ta = all_tensors(plain), tb = all_tensors(ckpt);  // 4. parameters and BatchNorm buffers
        for (std::size_t i = 0; i < ta.size(); ++i) CHECK(same_bits(*ta[i], *tb[i]));
    }
    CHECK(plain.h[0].bn.num_batches_tracked() == 3.0f);
}
}  // namespace

TEST_CASE("checkpointed gradients are bitwise identical under every policy") {
    ad::default_tape().set_checkpoint_check(true);
    const Policy policies[] = {Policy::blocks(), Policy::every(2), Policy::sqrt(), Policy::selective(),
                               Policy::when([](const std::string& path, std::size_t) { return path != "h.1"; }),
                               Policy::none()};
    for (const Policy& policy : policies)
        for (std::uint64_t seed : {1u, 2u})
            for (float p : {0.1f, 0.5f}) check_policy(policy, seed, p);
    check_policy(Policy::sqrt(), 3, 0.1f, 10);  // segments of 3, 3, 2, 2
    ad::default_tape().set_checkpoint_check(false);
}

TEST_CASE("in bf16 too, checkpointed gradients are bitwise identical under every policy") {
    ad::default_tape().set_checkpoint_check(true);
    for (const Policy& policy : {Policy::blocks(), Policy::sqrt(), Policy::selective(), Policy::none()})
        check_policy(policy, 4, 0.1f, 4, Precision::bf16);
    ad::default_tape().set_checkpoint_check(false);
}

TEST_CASE("a checkpointed block recomputes with its forward's precision, whatever the backward runs under") {
    auto rng_a = std::make_shared<Generator>(5), rng_b = std::make_shared<Generator>(5);
    auto plain = make_stack(5, 3, 0.1f, rng_a);
    auto ckpt = set_checkpointing(make_stack(5, 3, 0.1f, rng_b), Policy::blocks());
    const IdTensor ids = random_ids(50);
    auto& tape = ad::default_tape();
    const auto gradients = [&](auto& model) {
        tape.zero_grad();
        Var loss;
        {
            Autocast bf16(Precision::bf16);
            Var y = model(ids);
            loss = ops::mean(y * y);
        }
        tape.backward(loss);  // fp32 here: the recomputation must still run in bf16
        std::vector<Tensor> grads;
        tree::foreach_parameter(model, [&](const std::string&, Param& p) { grads.push_back(*tape.grad(p.value)); });
        tape.reset();
        return grads;
    };
    const auto ga = gradients(plain), gb = gradients(ckpt);
    REQUIRE(ga.size() == gb.size());
    for (std::size_t i = 0; i < ga.size(); ++i) CHECK(same_bits(ga[i], gb[i]));
    tape.clear_grads();
}
