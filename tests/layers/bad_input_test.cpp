// Layer-level bad input: wrong shapes, empty batches, and non-finite inputs under nn::CheckFinite each
// raise a typed exception whose message names the layer path and the shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "models/bert/pretrained.hpp"
#include "models/gpt2/pretrained.hpp"
#include "remat/checkpoint.hpp"
#include "remat/layers.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/constant.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {
using test::fixtures;
constexpr float not_a_number = std::numeric_limits<float>::quiet_NaN();
constexpr float infinity = std::numeric_limits<float>::infinity();

using test::constant;

Tensor ones(const Shape& shape) { return full(shape, 1.0f); }

IdTensor ids_of(std::initializer_list<std::size_t> shape, std::int64_t value) {
    IdTensor t = IdTensor::from_shape(shape);
    std::fill(t.begin(), t.end(), value);
    return t;
}

// `call` throws E whose what() is exactly `message`.
template <class E, class F>
void check_throws(F&& call, const std::string& message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(call(), message.c_str(), E);
}
}  // namespace

TEST_CASE("layers: wrong shapes name the layer path and both shapes") {
    Generator rng(1);
    auto linear = nn::Linear::create(4, 8, rng);
    auto conv = nn::Conv1D::create(4, 8, rng);
    auto norm = nn::LayerNorm::create(4);
    auto batch_norm = nn::BatchNorm::create(4);
    auto attention = nn::MultiHeadAttention::create(8, 2, rng);
    auto chain = nn::chain(nn::Linear::create(4, 8, rng), nn::relu, nn::Linear::create(6, 2, rng));
    const Var x = constant(ones(Shape{3, 5}));

    check_throws<ShapeError>([&] { return nn::call("h.3.fc", linear, x); }, "h.3.fc: Linear: expected input (…, 4), got (3, 5)");
    check_throws<ShapeError>([&] { return nn::call("c_fc", conv, x); }, "c_fc: Conv1D: expected input (…, 4), got (3, 5)");
    check_throws<ShapeError>([&] { return nn::call("ln_1", norm, x); }, "ln_1: LayerNorm: expected input (…, 4), got (3, 5)");
    check_throws<ShapeError>([&] { return nn::call("bn", batch_norm, x); }, "bn: BatchNorm: expected input (N, 4), got (3, 5)");
    check_throws<ShapeError>([&] { return nn::call("attn", attention, constant(ones(Shape{2, 8}))); },
                             "attn: MultiHeadAttention: expected input (B, T, C), got (2, 8)");
    // Inside a container the path grows by one segment per level.
    check_throws<ShapeError>([&] { return nn::call("mlp", chain, constant(ones(Shape{3, 4}))); },
                             "mlp.layers.2: Linear: expected input (…, 6), got (3, 8)");

    SUBCASE("in a model, checkpointed or not") {
        auto model = gpt2::from_pretrained(fixtures / "gpt2-tiny");
        Generator init(2);
        model.transformer.h[1].mlp.c_proj = nn::Conv1D::create(32, 16, init);  // c_fc gives 64 features
        const IdTensor ids = ids_of({1, 4}, 3);
        const std::string message = "transformer.h.1.mlp.c_proj: Conv1D: expected input (…, 32), got (1, 4, 64)";
        check_throws<ShapeError>([&] { return model(ids); }, message);
        auto checkpointed = set_checkpointing(std::move(model), Policy::parse("blocks"));
        check_throws<ShapeError>([&] { return checkpointed(ids); }, message);
    }
}

TEST_CASE("layers: an empty batch is refused with the layer path and the shape") {
    Generator rng(1);
    const Var empty_rows = constant(ones(Shape{0, 4}));
    check_throws<ValueError>([&] { return nn::call("fc", nn::Linear::create(4, 2, rng), empty_rows); },
                             "fc: Linear: empty batch, input (0, 4)");
    check_throws<ValueError>([&] { return nn::call("c_fc", nn::Conv1D::create(4, 2, rng), empty_rows); },
                             "c_fc: Conv1D: empty batch, input (0, 4)");
    check_throws<ValueError>([&] { return nn::call("ln", nn::LayerNorm::create(4), empty_rows); }, "ln: LayerNorm: empty batch, input (0, 4)");
    auto batch_norm = nn::BatchNorm::create(4);
    check_throws<ValueError>([&] { return nn::call("bn", batch_norm, empty_rows); }, "bn: BatchNorm: empty batch, input (0, 4)");
    CHECK(batch_norm.num_batches_tracked() == 0.0f);  // refused before any statistic moved
    // Layers without a check of their own (Dropout, activations, combinators) are refused by nn::call:
    // before, they passed the empty batch on silently.
    check_throws<ValueError>([&] { return nn::call("drop", nn::Dropout::create(0.1f), empty_rows); },
                             "drop: Dropout: empty batch, input (0, 4)");
    check_throws<ValueError>([&] { return nn::call("act", nn::gelu_tanh, empty_rows); }, "act: gelu_tanh: empty batch, input (0, 4)");
    check_throws<ValueError>([&] { return nn::call("h.0", nn::chain(nn::relu, nn::tanh), empty_rows); },
                             "h.0: Chain: empty batch, input (0, 4)");
    check_throws<ValueError>([&] { return nn::call("res", nn::SkipConnection<nn::Relu, nn::Add>{nn::relu, nn::Add{}}, empty_rows); },
                             "res: SkipConnection: empty batch, input (0, 4)");
    check_throws<ValueError>([&] { return nn::call("attn", nn::MultiHeadAttention::create(4, 2, rng), constant(ones(Shape{2, 0, 4}))); },
                             "attn: MultiHeadAttention: empty batch, input (2, 0, 4)");
    check_throws<ValueError>([&] { return nn::call("wte", nn::Embedding::create(10, 4, rng), ids_of({0, 3}, 1)); },
                             "wte: Embedding: empty batch, ids (0, 3)");
    // A lambda as a layer has no name of its own.
    check_throws<ValueError>([&] { return nn::call("f", [](const Var& v) { return v; }, empty_rows); }, "f: layer: empty batch, input (0, 4)");

    SUBCASE("models: zero sequences or zero tokens") {
        auto gpt2 = gpt2::from_pretrained(fixtures / "gpt2-tiny");
        check_throws<ValueError>([&] { return gpt2(ids_of({0, 4}, 1)); }, "transformer: GPT2Model: empty batch, ids (0, 4)");
        check_throws<ValueError>([&] { return gpt2(ids_of({2, 0}, 1)); }, "transformer: GPT2Model: empty batch, ids (2, 0)");
        auto bert = bert::from_pretrained(fixtures / "bert-tiny");
        check_throws<ValueError>([&] { return bert(bert::Inputs{ids_of({0, 4}, 1), IdTensor(), IdTensor()}); },
                                 "bert: BertModel: empty batch, input_ids (0, 4)");  // BertModel checks its inputs itself
    }
}

TEST_CASE("nn::CheckFinite: non-finite inputs name the layer path, the shape and the first index") {
    Generator rng(1);
    auto linear = nn::Linear::create(16, 4, rng);
    Tensor bad = ones(Shape{2, 8, 16});
    bad(0, 3, 5) = not_a_number;
    bad(1, 0, 0) = not_a_number;  // later in C order: the first one is reported
    const Var x = constant(bad);

    CHECK_FALSE(nn::check_finite_enabled);  // off by default: NaN flows through unchecked
    CHECK(std::isnan(nn::call("attn", linear, x).value()(0, 3, 0)));
    {
        nn::CheckFinite on;
        check_throws<ValueError>([&] { return nn::call("h.3.attn", linear, x); }, "h.3.attn: input (2, 8, 16) has NaN at index (0, 3, 5)");
        // Nested calls prepend their segments, as for any error.
        check_throws<ValueError>([&] { return nn::call("h", [&](const Var& v) { return nn::call("3", [&](const Var& w) { return nn::call("attn", linear, w); }, v); }, x); },
                                 "h: input (2, 8, 16) has NaN at index (0, 3, 5)");
        Tensor infinite = ones(Shape{3});
        infinite(2) = -infinity;
        check_throws<ValueError>([&] { return nn::call("ln", nn::LayerNorm::create(3), constant(infinite)); },
                                 "ln: input (3,) has -inf at index (2)");
        infinite(2) = infinity;
        check_throws<ValueError>([&] { return nn::call("add", nn::Add{}, constant(ones(Shape{3})), constant(infinite)); },
                                 "add: argument 2 (3,) has inf at index (2)");
        Tensor scalar = full(Shape{}, not_a_number);
        check_throws<ValueError>([&] { return nn::call("s", [](const Var& v) { return v; }, constant(scalar)); },
                                 "s: input () has NaN at index ()");
        CHECK_NOTHROW(nn::call("fine", linear, constant(ones(Shape{2, 16}))));
        {
            nn::CheckFinite off(false);  // scopes nest
            CHECK_NOTHROW(nn::call("attn", linear, x));
        }
        CHECK(nn::check_finite_enabled);
        bool other_thread = true;
        std::thread([&] { other_thread = nn::check_finite_enabled; }).join();
        CHECK_FALSE(other_thread);  // per thread
    }
    CHECK_FALSE(nn::check_finite_enabled);  // restored
    nn::set_check_finite(true);
    CHECK(nn::check_finite_enabled);
    nn::set_check_finite(false);
}

TEST_CASE("nn::CheckFinite in a model: the first layer fed a NaN is named, checkpointed or not") {
    auto model = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    model.transformer.h[0].mlp.c_fc.weight.value(0, 5) = not_a_number;  // every position's feature 5 becomes NaN
    const IdTensor ids = ids_of({1, 4}, 3);
    CHECK_NOTHROW(model(ids));  // unchecked: NaN logits
    nn::CheckFinite on;
    const std::string message = "transformer.h.0.mlp.c_proj: input (1, 4, 64) has NaN at index (0, 0, 5)";
    check_throws<ValueError>([&] { return model(ids); }, message);
    auto checkpointed = set_checkpointing(std::move(model), Policy::parse("blocks"));
    check_throws<ValueError>([&] { return checkpointed(ids); }, message);
}
