#include <doctest/doctest.h>

#include <cstring>

#include "models/bert/bert.hpp"
#include "remat/ad/tape.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "remat/tree/show.hpp"
#include "tests/support/ids.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::ids_of;
using test::same_bits;

namespace {
bert::Config tiny() {
    bert::Config c;
    c.vocab_size = 40;
    c.hidden_size = 16;
    c.num_hidden_layers = 3;
    c.num_attention_heads = 4;
    c.intermediate_size = 32;
    c.max_position_embeddings = 12;
    return c;
}
bert::Inputs inputs() {
    return {ids_of({{2, 5, 9, 9, 1, 3}, {7, 4, 4, 30, 8, 0}}), ids_of({{0, 0, 0, 1, 1, 1}, {0, 0, 1, 1, 1, 1}}),
            ids_of({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}})};
}
}  // namespace

TEST_CASE("BERT structure") {
    SUBCASE("BERT-base with pooler has HuggingFace's 109,482,240 parameters") {
        Generator init(0);
        auto model = bert::create_base(bert::Config{}, init);
        CHECK(tree::count_parameters(model) == 109482240);
    }
    SUBCASE("parameter paths are HF's names") {
        Generator init(0);
        auto model = bert::create(tiny(), init);
        std::vector<std::string> paths;
        for (auto& [path, p] : tree::named_parameters(model)) paths.push_back(path);
        CHECK(paths[0] == "bert.embeddings.word_embeddings.weight");
        CHECK(paths[3] == "bert.embeddings.LayerNorm.weight");
        CHECK(paths[5] == "bert.encoder.layer.0.attention.self.query.weight");
        CHECK(paths[11] == "bert.encoder.layer.0.attention.output.dense.weight");
        CHECK(paths[13] == "bert.encoder.layer.0.attention.output.LayerNorm.weight");
        CHECK(paths[15] == "bert.encoder.layer.0.intermediate.dense.weight");
        CHECK(paths[17] == "bert.encoder.layer.0.output.dense.weight");
        CHECK(paths[19] == "bert.encoder.layer.0.output.LayerNorm.weight");
        CHECK(paths.back() == "cls.predictions.bias");
        CHECK(paths[paths.size() - 5] == "cls.predictions.transform.dense.weight");
        CHECK(model.bert.encoder.layer[0].intermediate.dense.weight.shape() == Shape{32, 16});  // (out, in)
    }
    SUBCASE("config") {
        auto c = bert::Config::from_json(R"({"vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 2,
            "num_attention_heads": 2, "intermediate_size": 32, "layer_norm_eps": 1e-12, "hidden_act": "gelu"})");
        CHECK(c.layer_norm_eps == 1e-12);
        CHECK(bert::Config::from_json(c.to_json()).intermediate_size == 32);
        CHECK_THROWS_WITH_AS(bert::Config::from_json(R"({"vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 2,
            "num_attention_heads": 3, "intermediate_size": 32})"),
                             "config.json: BERT config: hidden_size = 16 is not divisible by num_attention_heads = 3",
                             ValueError);
        CHECK_THROWS_WITH_AS(bert::Config::from_json(R"({"vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 2,
            "num_attention_heads": 2, "intermediate_size": 32, "position_embedding_type": "relative_key"})"),
                             "config.json: unsupported position_embedding_type \"relative_key\" (only \"absolute\")",
                             ValueError);
    }
}

TEST_CASE("BERT forward") {
    Generator init(1);
    auto model = bert::create(tiny(), init);
    ad::NoGrad no_grad;
    const bert::Inputs in = inputs();
    Var logits = model(in);
    CHECK(logits.shape() == Shape{2, 6, 40});

    SUBCASE("padded positions do not influence the others") {
        bert::Inputs changed = in;
        changed.input_ids(1, 5) = 17;
        Var again = model(changed);
        for (std::size_t t = 0; t < 4; ++t) CHECK(again.value()(1, t, 3) == logits.value()(1, t, 3));
    }
    SUBCASE("token types default to zeros") {
        bert::Inputs zeros_in = in;
        zeros_in.token_type_ids = IdTensor(in.input_ids.shape(), 0);
        bert::Inputs absent = in;
        absent.token_type_ids = IdTensor();
        CHECK(same_bits(model(zeros_in).value(), model(absent).value()));
    }
    SUBCASE("bad input") {
        bert::Inputs bad = in;
        bad.attention_mask = ids_of({{1, 1}});
        CHECK_THROWS_WITH_AS(model(bad), "bert: BertModel: attention_mask (1, 2) does not match input_ids (2, 6)", ShapeError);
        bad = in;
        bad.token_type_ids(0, 0) = 2;
        CHECK_THROWS_WITH_AS(model(bad), doctest::Contains("bert.embeddings.token_type_embeddings: embedding: id 2"),
                             ValueError);
    }
}

TEST_CASE("BERT checkpointed: bitwise identical gradients with dropout and padding, every policy") {
    const bert::Inputs in = inputs();
    IdTensor labels = IdTensor(in.input_ids.shape(), -100);
    labels(0, 1) = 5;
    labels(1, 2) = 4;
    labels(1, 3) = 30;
    ad::default_tape().set_checkpoint_check(true);
    for (const char* spec : {"blocks", "every:2", "sqrt", "selective"}) {
        CAPTURE(spec);
        Generator init_a(2), init_b(2);
        auto rng_a = std::make_shared<Generator>(3), rng_b = std::make_shared<Generator>(3);
        auto plain = bert::create(tiny(), init_a, rng_a);
        auto ckpt = set_checkpointing(bert::create(tiny(), init_b, rng_b), Policy::parse(spec));
        auto [la, ga] = train::withgradient([&](auto& m) { return m.loss(m(in), labels); }, plain);
        auto [lb, gb] = train::withgradient([&](auto& m) { return m.loss(m(in), labels); }, ckpt);
        CHECK(la == lb);
        const auto pa = tree::parameters(ga), pb = tree::parameters(gb);
        for (std::size_t i = 0; i < pa.size(); ++i) CHECK(same_bits(pa[i]->value, pb[i]->value));
        CHECK(rng_a->state() == rng_b->state());
    }
    ad::default_tape().set_checkpoint_check(false);
}
