// The Llama family's structure, configs and checkpointing (the float64 references are
// llama_golden_test.cpp): HF's parameter paths and counts, tied and untied heads, Qwen2's biases,
// windows by layer, rope_scaling as HF reads it, and bitwise-identical gradients under every policy.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "models/llama/architecture.hpp"
#include "models/mistral/architecture.hpp"
#include "models/qwen2/architecture.hpp"
#include "remat/ad/tape.hpp"
#include "remat/train/gradient.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/support/ids.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::ids_of;
using test::same_bits;

namespace {
// 40 ids, 16 features, 4 heads of 4 on 2 KV heads, MLP 24 wide.
template <class C>
C tiny(std::size_t layers = 3) {
    C c;
    c.vocab_size = 40;
    c.hidden_size = 16;
    c.intermediate_size = 24;
    c.num_hidden_layers = layers;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.max_position_embeddings = 32;
    c.attention_dropout = 0.1;
    return c;
}


std::vector<std::string> paths(auto& model) {
    std::vector<std::string> out;
    for (auto& [path, p] : tree::named_parameters(model)) out.push_back(path);
    return out;
}
}  // namespace

TEST_CASE("Llama structure: HF's paths and parameter counts, tied and untied") {
    Generator init(1);
    llama::Config c = tiny<llama::Config>(2);
    auto untied = llama::create(c.settings(), init);
    const auto p = paths(untied);
    REQUIRE(p.size() == 1 + 2 * 9 + 1 + 1);
    CHECK(p[0] == "model.embed_tokens.weight");
    CHECK(p[1] == "model.layers.0.self_attn.q_proj.weight");
    CHECK(p[2] == "model.layers.0.self_attn.k_proj.weight");
    CHECK(p[5] == "model.layers.0.mlp.gate_proj.weight");
    CHECK(p[8] == "model.layers.0.input_layernorm.weight");
    CHECK(p[9] == "model.layers.0.post_attention_layernorm.weight");
    CHECK(p[19] == "model.norm.weight");
    CHECK(p[20] == "lm_head.weight");
    // HF's num_parameters(): V·C + L·(C·H·D + 2·C·Hkv·D + H·D·C + 3·C·I + 2·C) + C (+ V·C untied)
    const std::size_t V = 40, C = 16, I = 24, HD = 16, KV = 8, L = 2;
    const std::size_t per_layer = C * HD + 2 * C * KV + HD * C + 3 * C * I + 2 * C;
    CHECK(tree::count_parameters(untied) == V * C + L * per_layer + C + V * C);
    c.tie_word_embeddings = true;
    auto tied = llama::create(c.settings(), init);
    CHECK(paths(tied).back() == "model.norm.weight");
    CHECK(tree::count_parameters(tied) == V * C + L * per_layer + C);

    c.attention_bias = c.mlp_bias = true;
    auto biased = llama::create(c.settings(), init);
    CHECK(tree::count_parameters(biased) == V * C + L * (per_layer + HD + 2 * KV + C + 2 * I + C) + C);
}

TEST_CASE("SmolLM2-135M's and TinyLlama-1.1B's shapes have HF's parameter counts") {
    llama::Config smol;  // SmolLM2-135M: tied head
    smol.num_hidden_layers = 30, smol.hidden_size = 576, smol.num_attention_heads = 9, smol.num_key_value_heads = 3;
    smol.intermediate_size = 1536, smol.vocab_size = 49152, smol.tie_word_embeddings = true;
    CHECK(llama::parameter_count(smol.settings()) == 134'515'008);  // HF's num_parameters()
    llama::Config tiny_llama;  // TinyLlama-1.1B: untied
    tiny_llama.num_hidden_layers = 22, tiny_llama.hidden_size = 2048, tiny_llama.num_attention_heads = 32;
    tiny_llama.num_key_value_heads = 4, tiny_llama.intermediate_size = 5632, tiny_llama.vocab_size = 32000;
    CHECK(llama::parameter_count(tiny_llama.settings()) == 1'100'048'384);
    // The count is what create() builds, biases and all.
    qwen2::Config q = tiny<qwen2::Config>(2);
    Generator init(1);
    auto model = llama::create(q.settings(), init);
    CHECK(tree::count_parameters(model) == llama::parameter_count(q.settings()));
}

TEST_CASE("Qwen2 has q, k, v biases and no o_proj bias; its windows follow use_sliding_window and max_window_layers") {
    Generator init(1);
    qwen2::Config c = tiny<qwen2::Config>(4);
    auto model = llama::create(c.settings(), init);
    const auto p = paths(model);
    CHECK(std::count_if(p.begin(), p.end(), [](const std::string& s) { return s.ends_with("_proj.bias"); }) == 4 * 3);
    CHECK(std::find(p.begin(), p.end(), "model.layers.0.self_attn.q_proj.bias") != p.end());
    CHECK(std::find(p.begin(), p.end(), "model.layers.0.self_attn.o_proj.bias") == p.end());
    CHECK(c.settings().windows == std::vector<std::size_t>{0, 0, 0, 0});  // use_sliding_window false: none
    c.use_sliding_window = true;
    c.sliding_window = 5;
    c.max_window_layers = 2;
    CHECK(c.settings().windows == std::vector<std::size_t>{0, 0, 5, 5});
    const auto from_file = qwen2::Config::from_json(
        R"({"vocab_size": 40, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3,
            "num_attention_heads": 4, "num_key_value_heads": 2, "use_sliding_window": true, "sliding_window": 7,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})");
    CHECK(from_file.settings().windows == std::vector<std::size_t>{7, 0, 7});
    CHECK_THROWS_WITH_AS(qwen2::Config::from_json(R"({"vocab_size": 40, "hidden_size": 16, "intermediate_size": 24,
            "num_hidden_layers": 2, "num_attention_heads": 4, "layer_types": ["full_attention", "chunked_attention"]})"),
                         doctest::Contains("unsupported layer_types entry \"chunked_attention\""), ValueError);
}

TEST_CASE("Llama configs: rope_scaling as HF reads it, the rules across fields, a round trip") {
    const std::string sizes = R"("vocab_size": 40, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 1,
                                 "num_attention_heads": 4)";
    auto read = [&](const std::string& extra) { return llama::Config::from_json("{" + sizes + extra + "}"); };
    CHECK(read("").rope_scaling.type == nn::RopeScaling::Type::none);
    CHECK(read(R"(, "rope_scaling": null)").rope_scaling.type == nn::RopeScaling::Type::none);
    const auto linear = read(R"(, "rope_scaling": {"type": "linear", "factor": 2.0})").rope_scaling;  // older spelling
    CHECK(linear.type == nn::RopeScaling::Type::linear);
    CHECK(linear.factor == 2.0);
    const auto l3 = read(R"(, "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})").rope_scaling;
    CHECK(l3.type == nn::RopeScaling::Type::llama3);
    CHECK(l3.factor == 32.0);
    CHECK_THROWS_WITH_AS(read(R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0})"),
                         "config.json: unsupported rope_scaling type \"yarn\" (remat implements \"default\", \"linear\" and \"llama3\")",
                         ValueError);
    CHECK_THROWS_WITH_AS(read(R"(, "rope_scaling": {"rope_type": "dynamic", "factor": 4.0})"),
                         doctest::Contains("unsupported rope_scaling type \"dynamic\""), ValueError);
    CHECK_THROWS_WITH_AS(read(R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0})"),
                         "config.json: rope_scaling needs low_freq_factor", ValueError);
    CHECK_THROWS_WITH_AS(read(R"(, "num_key_value_heads": 3)"),
                         "config.json: Llama config: num_key_value_heads = 3 does not divide num_attention_heads = 4",
                         ValueError);
    CHECK_THROWS_WITH_AS(read(R"(, "tie_word_embeddings": 1)"),
                         "config.json: tie_word_embeddings must be true or false, got 1", ValueError);
    CHECK_THROWS_WITH_AS(read(R"(, "hidden_act": "gelu_quick")"), doctest::Contains("unsupported hidden_act \"gelu_quick\""),
                         ValueError);
    llama::Config c = read(R"(, "head_dim": 6, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 64}, "tie_word_embeddings": true)");
    CHECK(c.head_size() == 6);
    const llama::Config back = llama::Config::from_json(c.to_json());
    CHECK(back.rope_scaling == c.rope_scaling);
    CHECK(back.head_dim == 6);
    CHECK(back.tie_word_embeddings);
    CHECK(nlohmann::json::parse(c.to_json())["architectures"][0] == "LlamaForCausalLM");
}

TEST_CASE("llama3 rope scaling: low frequencies divided by the factor, high ones kept, the band between blended") {
    const nn::RopeScaling s{nn::RopeScaling::Type::llama3, 8.0, 1.0, 4.0, 64};
    const auto plain = nn::rope_inverse_frequencies(16, 10000.0, {});
    const auto scaled = nn::rope_inverse_frequencies(16, 10000.0, s);
    REQUIRE(scaled.size() == 8);
    CHECK(plain[1] == doctest::Approx(std::pow(10000.0, -2.0 / 16)));
    std::size_t kept = 0, divided = 0, blended = 0;
    for (std::size_t i = 0; i < 8; ++i) {
        const double wavelen = 2 * M_PI / plain[i];
        if (wavelen < 64 / 4.0) kept += scaled[i] == plain[i];
        else if (wavelen > 64 / 1.0) divided += scaled[i] == doctest::Approx(plain[i] / 8).epsilon(1e-15);
        else blended += scaled[i] < plain[i] && scaled[i] > plain[i] / 8;
    }
    CHECK(kept > 0);
    CHECK(divided > 0);
    CHECK(blended > 0);
    CHECK(kept + divided + blended == 8);
}

TEST_CASE("Llama family checkpointed: bitwise identical gradients with dropout and padding, every policy") {
    const IdTensor ids = ids_of({{1, 2, 3, 4, 5, 6, 7, 8}, {7, 7, 7, 0, 39, 3, 2, 1}});
    const IdTensor mask = ids_of({{1, 1, 1, 1, 1, 1, 1, 1}, {0, 0, 1, 1, 1, 1, 1, 0}});  // left and right padding
    mistral::Config windowed = tiny<mistral::Config>();
    windowed.sliding_window = 3;
    const llama::Settings cases[] = {tiny<llama::Config>().settings(), tiny<qwen2::Config>().settings(),
                                     windowed.settings()};
    ad::default_tape().set_checkpoint_check(true);
    for (std::size_t k = 0; k < 3; ++k)
        for (const char* spec : {"blocks", "every:2", "sqrt", "selective"}) {
            CAPTURE(k);
            CAPTURE(spec);
            Generator init_a(2), init_b(2);
            auto rng_a = std::make_shared<Generator>(3), rng_b = std::make_shared<Generator>(3);
            auto plain = llama::create(cases[k], init_a, rng_a);
            auto ckpt = set_checkpointing(llama::create(cases[k], init_b, rng_b), Policy::parse(spec));
            auto [la, ga] = train::withgradient([&](auto& m) { return m.loss(m(ids, mask), ids); }, plain);
            auto [lb, gb] = train::withgradient([&](auto& m) { return m.loss(m(ids, mask), ids); }, ckpt);
            CHECK(la == lb);
            const auto pa = tree::parameters(ga), pb = tree::parameters(gb);
            REQUIRE(pa.size() == pb.size());
            for (std::size_t i = 0; i < pa.size(); ++i) CHECK(same_bits(pa[i]->value, pb[i]->value));
            CHECK(rng_a->state() == rng_b->state());
        }
    ad::default_tape().set_checkpoint_check(false);
}

TEST_CASE("Mistral's window: a key further back than the window reaches no position") {
    mistral::Config c = tiny<mistral::Config>(1);
    c.attention_dropout = 0;
    c.sliding_window = 3;
    Generator init(4);
    auto model = llama::create(c.settings(), init);
    ad::NoGrad no_grad;
    const Tensor a = model(ids_of({{1, 2, 3, 4, 5, 6, 7}})).value();
    const Tensor b = model(ids_of({{9, 2, 3, 4, 5, 6, 7}})).value();  // token 0 differs
    for (std::size_t t = 0; t < 7; ++t) {
        CAPTURE(t);
        bool same = true;
        for (std::size_t v = 0; v < 40; ++v) same = same && a(0, t, v) == b(0, t, v);
        CHECK(same == (t >= 3));  // position t sees t-2 … t
    }
}
