// Checkpointing models of other shapes: a REMAT_MODEL plain struct, checkpoints nested in checkpoints.
#include <doctest/doctest.h>

#include "remat/ad/tape.hpp"
#include "remat/checkpoint.hpp"
#include "remat/layers.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "remat/tree/show.hpp"
#include "tests/checkpoint/stack.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using namespace remat::test::checkpointing;
using test::same_bits;

namespace {
// Two blocks in one block: checkpoints inside a checkpoint.
template <class B>
struct Pair {
    BOOST_HANA_DEFINE_STRUCT(Pair, (B, first), (B, second));
    static constexpr bool is_block = true;
    Var operator()(const Var& x) { return second(first(x)); }
};
template <class B>
Pair(B, B) -> Pair<B>;
}  // namespace

namespace {
// A plain model with blocks as fixed members, declared with REMAT_MODEL so set_checkpointing can wrap them.
using PlainBlock = Block<nn::Chain<nn::Linear, nn::GeluTanh, nn::Linear>>;
REMAT_MODEL(PlainNet, (nn::Embedding, wte), (PlainBlock, b0), (PlainBlock, b1), (nn::LayerNorm, ln_f), (float, gain))
    static constexpr const char* name = "PlainNet";
    Var operator()(const IdTensor& ids) {
        Var e = nn::call("wte", wte, ids);
        Var y = nn::call("b1", b1, nn::call("b0", b0, e));
        return nn::call("ln_f", ln_f, y + e) * gain;
    }
};

PlainNet make_plain_net(std::uint64_t seed, float p, std::shared_ptr<Generator> shared) {
    auto stack = make_stack(seed, 2, p, std::move(shared));
    return {std::move(stack.wte), std::move(stack.h[0]), std::move(stack.h[1]), std::move(stack.ln_f), 3.0f};
}
}  // namespace

TEST_CASE("a REMAT_MODEL plain struct checkpoints with bitwise identical gradients") {
    ad::default_tape().set_checkpoint_check(true);
    for (const char* spec : {"blocks", "every:2", "sqrt", "selective", "none"}) {
        CAPTURE(spec);
        auto rng_a = std::make_shared<Generator>(5), rng_b = std::make_shared<Generator>(5);
        auto plain = make_plain_net(5, 0.3f, rng_a);
        auto ckpt = set_checkpointing(make_plain_net(5, 0.3f, rng_b), Policy::parse(spec));
        static_assert(std::is_same_v<decltype(ckpt), BasicPlainNet<nn::Embedding, Checkpointed<PlainBlock>,
                                                                   Checkpointed<PlainBlock>, nn::LayerNorm, float>>);
        CHECK(ckpt.gain == 3.0f);
        CHECK(tree::summary(ckpt) == tree::summary(plain));
        const IdTensor ids = random_ids(6);
        auto [la, ga] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, plain);
        auto [lb, gb] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, ckpt);
        CHECK(la == lb);
        const auto pa = tree::named_parameters(ga), pb = tree::named_parameters(gb);
        REQUIRE(pa.size() == pb.size());
        for (std::size_t i = 0; i < pa.size(); ++i) {
            CAPTURE(pa[i].first);
            CHECK(pa[i].first == pb[i].first);
            CHECK(same_bits(pa[i].second->value, pb[i].second->value));
        }
        CHECK(rng_a->state() == rng_b->state());
        static_assert(std::is_same_v<decltype(unset_checkpointing(std::move(ckpt))), PlainNet>);
    }
    ad::default_tape().set_checkpoint_check(false);
}

TEST_CASE("nested checkpoints") {
    ad::default_tape().set_checkpoint_check(true);
    for (std::uint64_t seed : {4u, 5u}) {
        auto rng_a = std::make_shared<Generator>(seed), rng_b = std::make_shared<Generator>(seed);
        auto pairs = [&](auto stack) {
            using B = std::decay_t<decltype(stack.h[0])>;
            std::vector<Pair<B>> h;
            for (std::size_t i = 0; i < stack.h.size(); i += 2) h.push_back({std::move(stack.h[i]), std::move(stack.h[i + 1])});
            return Stack<Pair<B>>{std::move(stack.wte), std::move(h), std::move(stack.ln_f)};
        };
        auto plain = pairs(make_stack(seed, 4, 0.3f, rng_a));
        auto nested = set_checkpointing(pairs(make_stack(seed, 4, 0.3f, rng_b)));
        static_assert(std::is_same_v<decltype(nested.h[0].inner.first), Checkpointed<std::decay_t<decltype(plain.h[0].first)>>>);
        const IdTensor ids = random_ids(seed);
        auto [la, ga] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, plain);
        auto [lb, gb] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, nested);
        CHECK(la == lb);
        const auto pa = tree::parameters(ga), pb = tree::parameters(gb);
        for (std::size_t i = 0; i < pa.size(); ++i) CHECK(same_bits(pa[i]->value, pb[i]->value));
        CHECK(rng_a->state() == rng_b->state());
    }
    ad::default_tape().set_checkpoint_check(false);
}

