// Moving a model between forward and backward is normal C++: the pending backward must neither
// crash nor change a bit. Plain and checkpointed GPT-2, moved, move-assigned, reallocated in a vector.
#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "models/gpt2/gpt2.hpp"
#include "tests/support/tiny_gpt2.hpp"
#include "remat/ad/tape.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::same_bits;

namespace {
// Dropout on (0.1): the recomputation must replay its masks.
gpt2::Config tiny() { return test::tiny_gpt2(4); }

IdTensor ids() {
    IdTensor t = IdTensor::from_shape({2, 6});
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<std::int64_t>((7 * i + 3) % 50);
    return t;
}
IdTensor mask() {  // the region copies it: it may go before backward
    IdTensor t = IdTensor::from_shape({2, 6});
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = i == 8 || i == 11 ? 0 : 1;
    return t;
}

// A fresh model, the same every time: same weights, its own dropout generator at the same seed.
template <class Model>
Model make(const char* policy) {
    Generator init(11);
    auto model = gpt2::create(tiny(), init, std::make_shared<Generator>(12));
    if constexpr (std::is_same_v<Model, gpt2::Model>)
        return model;
    else
        return set_checkpointing(std::move(model), Policy::parse(policy));
}

template <class Model>
Var forward(Model& model) {
    IdTensor m = mask();
    return model.loss(model(ids(), m), ids());
}

// Every parameter's gradient, read from the tape through `model`'s own parameters.
template <class Model>
std::vector<Tensor> grads_of(Model& model) {
    std::vector<Tensor> grads;
    for (Param* p : tree::parameters(model)) {
        const Tensor* g = ad::default_tape().grad(p->value);
        grads.push_back(g ? *g : Tensor(Shape{0}));
    }
    return grads;
}

void check_same(const std::vector<Tensor>& got, const std::vector<Tensor>& expected) {
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i].size() > 0);
        CHECK(same_bits(got[i], expected[i]));
    }
}

// The same step without any move.
template <class Model>
std::vector<Tensor> unmoved(const char* policy) {
    auto& tape = ad::default_tape();
    tape.clear_grads();
    auto model = make<Model>(policy);
    tape.backward(forward(model));
    auto grads = grads_of(model);
    tape.clear_grads();
    return grads;
}

template <class Model>
void check_moves(const char* policy) {
    CAPTURE(policy);
    auto& tape = ad::default_tape();
    tape.reset();
    tape.set_checkpoint_check(true);
    const auto expected = unmoved<Model>(policy);

    SUBCASE("move-constructed, the original destroyed") {
        std::optional<Model> first(make<Model>(policy));
        Var loss = forward(*first);
        Model moved = std::move(*first);
        first.reset();  // nothing may point into it any more
        tape.backward(loss);
        check_same(grads_of(moved), expected);
    }
    SUBCASE("move-assigned over another model") {
        std::optional<Model> first(make<Model>(policy));
        Model target = make<Model>(policy);
        Var loss = forward(*first);
        target = std::move(*first);
        first.reset();
        tape.backward(loss);
        check_same(grads_of(target), expected);
    }
    SUBCASE("in a std::vector that reallocates") {
        std::vector<Model> models;
        models.reserve(1);
        models.push_back(make<Model>(policy));
        Var loss = forward(models[0]);
        const Model* before = models.data();
        for (int i = 0; i < 4; ++i) models.push_back(make<Model>(policy));
        REQUIRE(models.data() != before);
        tape.backward(loss);
        check_same(grads_of(models[0]), expected);
    }
    tape.clear_grads();
    tape.set_checkpoint_check(false);
}

using CheckpointedGPT2 = decltype(set_checkpointing(std::declval<gpt2::Model>()));
}  // namespace

TEST_CASE("a plain model moved between forward and backward gets the same gradients, bit for bit") {
    check_moves<gpt2::Model>("none");
}

TEST_CASE("a checkpointed model moved between forward and backward gets the same gradients, bit for bit") {
    for (const char* policy : {"blocks", "sqrt", "selective", "every:2"}) check_moves<CheckpointedGPT2>(policy);
}

TEST_CASE("a model destroyed before backward") {
    auto& tape = ad::default_tape();
    tape.reset();
    SUBCASE("plain: backward still runs (the recording shares the parameters' tensors)") {
        std::optional<gpt2::Model> model(make<gpt2::Model>("none"));
        Var loss = forward(*model);
        model.reset();
        tape.backward(loss);
    }
    SUBCASE("checkpointed: backward throws, saying what to do, and leaves the tape usable") {
        std::optional<CheckpointedGPT2> model(make<CheckpointedGPT2>("blocks"));
        Var loss = forward(*model);
        model.reset();
        CHECK_THROWS_WITH_AS(tape.backward(loss), doctest::Contains("keep the model alive until backward"),
                             std::logic_error);
        CHECK(tape.node_count() == 0);
        auto again = make<CheckpointedGPT2>("blocks");
        tape.backward(forward(again));
    }
    tape.clear_grads();
}
