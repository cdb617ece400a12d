// The checkpointing contract (../shared/design.md), the points beyond bitwise gradients: transparency,
// frozen inputs, no-grad, modes, exceptions, memory, other backends.
#include <doctest/doctest.h>

#include "remat/ad/finite_difference.hpp"
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

TEST_CASE("checkpointed models are transparent") {
    auto rng = std::make_shared<Generator>(1);
    auto plain = make_stack(1, 3, 0.1f, rng);
    const std::string printed = tree::summary(plain);
    std::vector<std::string> paths;
    for (auto& [path, p] : tree::named_parameters(plain)) paths.push_back(path);
    const float* storage = std::get<0>(plain.h[2].mlp.layers).weight.value.data();
    auto ckpt = set_checkpointing(std::move(plain), Policy::every(2));
    CHECK(tree::summary(ckpt) == printed);
    std::vector<std::string> after;
    for (auto& [path, p] : tree::named_parameters(ckpt)) after.push_back(path);
    CHECK(after == paths);
    CHECK(ckpt.h[0].options.active);
    CHECK_FALSE(ckpt.h[1].options.active);
    CHECK(ckpt.h[2].options.active);
    auto back = unset_checkpointing(std::move(ckpt));
    static_assert(std::is_same_v<decltype(back), decltype(make_stack(1, 3, 0.1f, rng))>);
    CHECK(std::get<0>(back.h[2].mlp.layers).weight.value.data() == storage);  // moved, never copied
}

TEST_CASE("a checkpointed block whose input requires no gradient still trains") {
    // The PyTorch trap: reentrant checkpoint after a frozen embedding returns no parameter gradients.
    auto rng_a = std::make_shared<Generator>(3), rng_b = std::make_shared<Generator>(3);
    auto plain = make_stack(3, 2, 0.1f, rng_a);
    auto ckpt = set_checkpointing(make_stack(3, 2, 0.1f, rng_b));
    nn::freeze(plain, [](const std::string& path) { return path.rfind("wte", 0) == 0; });
    nn::freeze(ckpt, [](const std::string& path) { return path.rfind("wte", 0) == 0; });
    const IdTensor ids = random_ids(3);
    auto [la, ga] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, plain);
    auto [lb, gb] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, ckpt);
    CHECK(gb.wte.weight.value.size() == 0);
    const Tensor& w = gb.h[0].inner.attn.in_proj.weight.value;
    CHECK(w.shape() == Shape{3 * C, C});
    CHECK(xt::sum(xt::abs(w))() > 0.0f);
    CHECK(same_bits(w, ga.h[0].attn.in_proj.weight.value));
}

TEST_CASE("under no-grad a checkpointed model records and keeps nothing extra") {
    auto rng_a = std::make_shared<Generator>(9), rng_b = std::make_shared<Generator>(9);
    auto plain = make_stack(9, 4, 0.1f, rng_a);
    auto ckpt = set_checkpointing(make_stack(9, 4, 0.1f, rng_b));
    const IdTensor ids = random_ids(9, 4, 16);
    ad::NoGrad no_grad;
    std::size_t peak_plain, peak_ckpt;
    Tensor ya, yb;
    {
        memory::PeakScope scope;
        ya = plain(ids).value();
        peak_plain = scope.peak_above_baseline();
    }
    {
        memory::PeakScope scope;
        yb = ckpt(ids).value();
        peak_ckpt = scope.peak_above_baseline();
    }
    CHECK(ad::default_tape().node_count() == 0);
    CHECK(peak_ckpt <= peak_plain);
    CHECK(same_bits(ya, yb));
}

TEST_CASE("automatic mode: dropout is active in the checkpoint's forward and in its recomputation") {
    auto rng = std::make_shared<Generator>(11);
    auto model = set_checkpointing(make_stack(11, 2, 0.5f, rng));
    const IdTensor ids = random_ids(11);
    Tensor off, on;
    {
        ad::NoGrad no_grad;
        off = model(ids).value();
    }
    on = model(ids).value();  // recording: automatic = train, dropout draws
    ad::default_tape().reset();
    CHECK_FALSE(same_bits(off, on));
    // And the recomputation agrees with the forward (it would not if dropout were off there):
    // the bitwise test above covers the gradients; the debug check covers the recorded ops.
    ad::default_tape().set_checkpoint_check(true);
    auto [loss, grads] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, model);
    ad::default_tape().set_checkpoint_check(false);
    CHECK(std::isfinite(loss));
}

TEST_CASE("the recomputation uses the modes resolved in the forward, even if backward runs under no-grad") {
    auto rng_a = std::make_shared<Generator>(13), rng_b = std::make_shared<Generator>(13);
    auto plain = make_stack(13, 3, 0.5f, rng_a);
    auto ckpt = set_checkpointing(make_stack(13, 3, 0.5f, rng_b));
    const IdTensor ids = random_ids(13);
    ad::Tape& tape = ad::default_tape();
    auto grads_of = [&](auto& model) {
        tape.clear_grads();
        Var loss = ops::mean(model(ids));  // automatic modes resolve to train here
        {
            ad::NoGrad no_grad;  // ... and would resolve to test during backward
            tape.backward(loss);
        }
        std::vector<Tensor> grads;
        for (Param* p : tree::parameters(model)) grads.push_back(*tape.grad(p->value));
        return grads;
    };
    const auto a = grads_of(plain), b = grads_of(ckpt);
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_bits(a[i], b[i]));
    tape.clear_grads();
}

TEST_CASE("an exception inside a checkpointed block propagates and leaves the tape usable") {
    auto rng = std::make_shared<Generator>(12);
    auto model = set_checkpointing(make_stack(12, 3, 0.1f, rng));
    model.h[1].inner.ln.weight.value = zeros(Shape{C + 1});  // a shape error inside block 1
    model.h[1].inner.ln.bias.value = zeros(Shape{C + 1});
    const IdTensor ids = random_ids(12);
    const auto rng_before = rng->state();
    CHECK_THROWS_WITH_AS(model(ids), "h.1.ln: LayerNorm: expected input (…, 9), got (2, 5, 8)", ShapeError);
    CHECK(model.h[1].inner.drop.mode == nn::Mode::automatic);  // modes restored
    CHECK(ad::default_tape().recording());
    ad::default_tape().reset();
    model.h[1].inner.ln = nn::LayerNorm::create(C);
    rng->set_state(rng_before);
    auto [loss, grads] = train::withgradient([&](auto& m) { return ops::mean(m(ids)); }, model);
    CHECK(std::isfinite(loss));
}

namespace {
// A layer that quietly does something else the second time it runs.
struct Fickle {
    BOOST_HANA_DEFINE_STRUCT(Fickle, (Param, w), (std::shared_ptr<int>, calls));
    static constexpr bool is_block = true;
    Var operator()(const Var& x) {
        Var y = x * leaf(w);
        if (++*calls == 2) y = ops::tanh(y);
        return y;
    }
};
}  // namespace

TEST_CASE("the debug check names the first op where a recomputation departs from the forward") {
    struct Model {
        BOOST_HANA_DEFINE_STRUCT(Model, (std::vector<Checkpointed<Fickle>>, h));
    };
    auto model = set_checkpointing(std::vector<Fickle>{Fickle{Param{full(Shape{3}, 2.0f)}, std::make_shared<int>(0)}});
    Tensor x = full(Shape{3}, 1.0f);
    ad::Tape& tape = ad::default_tape();
    tape.set_checkpoint_check(true);
    Tensor* wrt[] = {&x};
    CHECK_THROWS_WITH_AS(ad::gradient([&] { return ops::sum(model[0](ad::leaf(x))); }, wrt),
                         "checkpoint check: the recomputation differs from the forward at op 1: the forward recorded "
                         "checkpoint (3,), the recomputation activation (3,) (does the region depend on state that "
                         "changed since the forward?)",
                         std::logic_error);
    tape.set_checkpoint_check(false);
    CHECK(tape.node_count() == 0);
}

TEST_CASE("peak activation memory on a stack of 12 blocks") {
    ad::Tape& tape = ad::default_tape();
    tape.set_checkpoint_check(false);
    auto measure = [&](const Policy& policy) {
        auto rng = std::make_shared<Generator>(5);
        auto model = set_checkpointing(make_stack(5, 12, 0.1f, rng), policy);
        const IdTensor ids = random_ids(5, 8, 64);  // activations dominate: B·T = 512 rows of C = 8
        auto step = [&] { tape.backward(ops::mean(model(ids))); };
        step();  // allocates the parameter gradients, which are not activations
        tape.zero_grad();
        memory::PeakScope scope;
        step();
        return scope.peak_above_baseline();
    };
    const double none = static_cast<double>(measure(Policy::none()));
    const double blocks = static_cast<double>(measure(Policy::blocks()));
    const double sqrt = static_cast<double>(measure(Policy::sqrt()));
    const double selective = static_cast<double>(measure(Policy::selective()));
    MESSAGE("peak activation bytes: none " << none << ", blocks " << blocks / none << "×, sqrt " << sqrt / none
                                           << "×, selective " << selective / none << "×");
    CHECK(blocks <= 0.25 * none);
    CHECK(sqrt > blocks);
    CHECK(sqrt < none);
    CHECK(selective > blocks);
    CHECK(selective < none);
}

TEST_CASE("policies") {
    CHECK(Policy::parse("every:3").k == 3);
    CHECK(Policy::parse("sqrt").to_string() == "sqrt");
    CHECK_THROWS_WITH_AS(Policy::parse("every:0"), "checkpoint policy every:K needs K ≥ 1", ValueError);
    CHECK_THROWS_WITH_AS(Policy::parse("often"),
                         "unknown checkpoint policy 'often' (expected none, blocks, every:K, sqrt, selective, selective:KINDS, "
                         "budget:SIZE, auto or plan:TEXT)", ValueError);
    CHECK(Policy::parse("selective").keep == Policy::selective_keep);
    const Policy projections = Policy::parse("selective:attention+projection+narrowing");
    CHECK(projections.keep == ad::KindSet{ad::OpKind::attention, ad::OpKind::projection, ad::OpKind::narrowing});
    CHECK(projections.to_string() == "selective:attention+projection+narrowing");
    CHECK(Policy::parse("selective:narrowing+attention").to_string() == "selective");
    CHECK(options_for(projections, "h.0", 0).keep == projections.keep);
    CHECK_THROWS_WITH_AS(Policy::parse("selective:attention+lstm"),
                         "checkpoint policy 'selective:attention+lstm': unknown op kind 'lstm' (attention, projection, "
                         "narrowing, matmul, softmax, norm, activation, elementwise, embedding)", ValueError);
    CHECK(sqrt_segments(12) == std::vector<std::size_t>{3, 3, 3, 3});
    CHECK(sqrt_segments(10) == std::vector<std::size_t>{3, 3, 2, 2});
    CHECK(sqrt_segments(1) == std::vector<std::size_t>{1});
    auto rng = std::make_shared<Generator>(1);
    auto model = set_checkpointing(make_stack(1, 10, 0.1f, rng), Policy::sqrt());
    std::vector<std::size_t> segments;
    for (auto& b : model.h) segments.push_back(b.options.segment);
    CHECK(segments == std::vector<std::size_t>{3, 0, 0, 3, 0, 0, 2, 0, 2, 0});
}

TEST_CASE("checkpointing works under another backend") {
    auto rng = std::make_shared<Generator>(2);
    auto plain = make_stack(2, 2, 0.0f, rng);
    nn::testmode(plain);  // finite differences need a deterministic function
    auto model = set_checkpointing(std::move(plain));
    const IdTensor ids = random_ids(2, 1, 3);
    auto params = tree::parameters(model);
    std::vector<Tensor*> wrt{&params[3]->value, &params.back()->value};
    auto loss = [&] { return ops::mean(ops::tanh(model(ids))); };
    const auto exact = ad::gradient(loss, wrt);
    ad::FiniteDifference fd(1e-2f);
    ad::UseBackend use(fd);
    const auto approx = ad::gradient(loss, wrt);
    for (std::size_t i = 0; i < wrt.size(); ++i)
        for (std::size_t j = 0; j < wrt[i]->size(); ++j)
            CHECK(approx.grads[i].data()[j] == doctest::Approx(exact.grads[i].data()[j]).epsilon(2e-2).scale(1e-2));
}
