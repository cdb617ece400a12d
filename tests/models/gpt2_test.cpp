#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstring>

#include "models/gpt2/gpt2.hpp"
#include "tests/support/tiny_gpt2.hpp"
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
gpt2::Config tiny() { return test::tiny_gpt2(3); }
}  // namespace

TEST_CASE("GPT-2 structure") {
    SUBCASE("GPT-2 small has HuggingFace's 124,439,808 parameters") {
        Generator init(0);
        auto model = gpt2::create(gpt2::Config{}, init);
        CHECK(tree::count_parameters(model) == 124439808);
    }
    SUBCASE("parameter paths are HF's names") {
        Generator init(0);
        auto model = gpt2::create(tiny(), init);
        std::vector<std::string> paths;
        for (auto& [path, p] : tree::named_parameters(model)) paths.push_back(path);
        const std::vector<std::string> head = {"transformer.wte.weight",
                                               "transformer.wpe.weight",
                                               "transformer.h.0.ln_1.weight",
                                               "transformer.h.0.ln_1.bias",
                                               "transformer.h.0.attn.c_attn.weight",
                                               "transformer.h.0.attn.c_attn.bias",
                                               "transformer.h.0.attn.c_proj.weight",
                                               "transformer.h.0.attn.c_proj.bias",
                                               "transformer.h.0.ln_2.weight",
                                               "transformer.h.0.ln_2.bias",
                                               "transformer.h.0.mlp.c_fc.weight",
                                               "transformer.h.0.mlp.c_fc.bias",
                                               "transformer.h.0.mlp.c_proj.weight",
                                               "transformer.h.0.mlp.c_proj.bias"};
        CHECK(std::vector<std::string>(paths.begin(), paths.begin() + 14) == head);
        CHECK(paths.size() == 2 + 3 * 12 + 2);
        CHECK(paths.back() == "transformer.ln_f.bias");
        CHECK(model.transformer.h[0].attn.c_attn.weight.shape() == Shape{16, 48});  // Conv1D: (in, out)
    }
    SUBCASE("config") {
        auto c = gpt2::Config::from_json(R"({"vocab_size": 64, "n_ctx": 16, "n_embd": 16, "n_layer": 2, "n_head": 2,
                                              "activation_function": "gelu", "resid_pdrop": 0.0})");
        CHECK(c.n_positions == 16);
        CHECK(c.activation_function == gpt2::Activation::gelu);
        CHECK(c.embd_pdrop == 0.1);
        CHECK(gpt2::Config::from_json(c.to_json()).n_positions == 16);
        CHECK_THROWS_WITH_AS(gpt2::Config::from_json(R"({"vocab_size": 64, "n_ctx": 16, "n_embd": 16, "n_layer": 2})"),
                             "config.json: missing field n_head", ValueError);
        CHECK_THROWS_WITH_AS(
            gpt2::Config::from_json(R"({"vocab_size": 64, "n_positions": 16, "n_embd": 18, "n_layer": 2, "n_head": 4})"),
            "config.json: GPT-2 config: n_embd = 18 is not divisible by n_head = 4", ValueError);
        CHECK_THROWS_WITH_AS(gpt2::Config::from_json("{oops"), doctest::Contains("config.json: not valid JSON"), ValueError);
    }
    SUBCASE("config scalars come back as the file wrote them") {
        const auto c = gpt2::Config::from_json(R"({"vocab_size": 64, "n_ctx": 16, "n_embd": 16, "n_layer": 2, "n_head": 2,
                                                    "resid_pdrop": 0.1, "layer_norm_epsilon": 1e-05, "initializer_range": 0.02})");
        const auto written = nlohmann::json::parse(c.to_json());
        CHECK(written["resid_pdrop"].dump() == "0.1");  // not 0.10000000149011612
        CHECK(written["layer_norm_epsilon"].dump() == "1e-05");
        CHECK(written["initializer_range"].dump() == "0.02");
        CHECK(written["n_inner"].is_null());
        CHECK(written["n_ctx"] == 16);
        CHECK(gpt2::Config::from_json(c.to_json()).to_json() == c.to_json());
    }
}

TEST_CASE("GPT-2 forward") {
    Generator init(1);
    auto model = gpt2::create(tiny(), init);
    const IdTensor ids = ids_of({{1, 2, 3, 4, 5}, {7, 7, 7, 0, 49}});
    ad::NoGrad no_grad;  // automatic modes: dropout off
    Var logits = model(ids);
    CHECK(logits.shape() == Shape{2, 5, 50});

    SUBCASE("causal: a token never sees later ones") {
        IdTensor changed = ids;
        changed(0, 4) = 9;
        Var again = model(changed);
        for (std::size_t t = 0; t < 4; ++t)
            for (std::size_t v = 0; v < 50; ++v) CHECK(again.value()(0, t, v) == logits.value()(0, t, v));
        CHECK(again.value()(0, 4, 0) != logits.value()(0, 4, 0));
    }
    SUBCASE("loss: next-token cross-entropy over non-ignored labels") {
        IdTensor labels = ids;
        labels(1, 2) = -100;
        const float loss = model.loss(logits, labels).value()();
        double total = 0;
        int count = 0;
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t t = 0; t + 1 < 5; ++t) {
                const auto target = labels(b, t + 1);
                if (target == -100) continue;
                double z = 0;
                for (std::size_t v = 0; v < 50; ++v) z += std::exp(static_cast<double>(logits.value()(b, t, v)));
                total += std::log(z) - logits.value()(b, t, static_cast<std::size_t>(target));
                ++count;
            }
        CHECK(count == 7);
        CHECK(loss == doctest::Approx(total / count).epsilon(1e-5));
    }
    SUBCASE("bad input names the layer") {
        CHECK_THROWS_WITH_AS(model(ids_of({{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}})),
                             "transformer: GPT2Model: 13 tokens exceed n_positions = 12", ValueError);
        CHECK_THROWS_WITH_AS(model(ids_of({{1, 50}})),
                             doctest::Contains("transformer.wte: embedding: id 50 at position 1 is out of range"),
                             ValueError);
    }
}

TEST_CASE("GPT-2 checkpointed: bitwise identical gradients with dropout and a padding mask, every policy") {
    const IdTensor ids = ids_of({{1, 2, 3, 4, 5, 6}, {7, 7, 7, 0, 49, 3}});
    const IdTensor mask = ids_of({{1, 1, 1, 1, 1, 1}, {1, 1, 0, 1, 1, 0}});  // kept alive by the checkpoints
    ad::default_tape().set_checkpoint_check(true);
    for (const char* spec : {"blocks", "every:2", "sqrt", "selective"}) {
        CAPTURE(spec);
        Generator init_a(2), init_b(2);
        auto rng_a = std::make_shared<Generator>(3), rng_b = std::make_shared<Generator>(3);
        auto plain = gpt2::create(tiny(), init_a, rng_a);
        auto ckpt = set_checkpointing(gpt2::create(tiny(), init_b, rng_b), Policy::parse(spec));
        auto [la, ga] = train::withgradient([&](auto& m) { return m.loss(m(ids, mask), ids); }, plain);
        auto [lb, gb] = train::withgradient([&](auto& m) { return m.loss(m(ids, mask), ids); }, ckpt);
        CHECK(la == lb);
        const auto pa = tree::parameters(ga), pb = tree::parameters(gb);
        for (std::size_t i = 0; i < pa.size(); ++i) CHECK(same_bits(pa[i]->value, pb[i]->value));
        CHECK(rng_a->state() == rng_b->state());
    }
    ad::default_tape().set_checkpoint_check(false);
}

TEST_CASE("GPT-2 padding mask: a padded key's content reaches no other position") {
    Generator init(4);
    auto model = gpt2::create(tiny(), init);
    ad::NoGrad no_grad;
    const IdTensor mask = ids_of({{1, 1, 0, 1, 1}});
    const Tensor a = model(ids_of({{1, 2, 3, 4, 5}}), mask).value();
    const Tensor b = model(ids_of({{1, 2, 9, 4, 5}}), mask).value();
    for (std::size_t t : {0, 1, 3, 4})
        for (std::size_t v = 0; v < 50; ++v) CHECK(a(0, t, v) == b(0, t, v));
    const Tensor unmasked = model(ids_of({{1, 2, 3, 4, 5}})).value();
    CHECK(unmasked(0, 4, 0) != a(0, 4, 0));
    CHECK_THROWS_WITH_AS(model(ids_of({{1, 2, 3}}), mask), "transformer: GPT2Model: attention_mask (1, 5) does not match input ids (1, 3)",
                         ShapeError);
}
