// LoRA (remat/adapters/lora.hpp): the adapted layer's formula by hand and against finite differences;
// set_lora's targets, freezing and errors; no gradient buffer for a frozen parameter; a checkpointed
// LoRA model's gradients bitwise those of the plain LoRA model, either order, every policy, fp32 and
// bf16; merging into the weights computes what the adapters computed.
#include <doctest/doctest.h>

#include <cmath>

#include "remat/adapters/lora.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/layers.hpp"
#include "remat/ops/precision.hpp"
#include "remat/planning/plan.hpp"
#include "remat/train/micro_batches.hpp"
#include "remat/tree/parameters.hpp"
#include "src/core/address_sanitizer.hpp"
#include "tests/support/check_gradients.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/table_model.hpp"

using namespace remat;
using adapters::LoraConfig;

namespace {

// A layer with an adapter whose B is not zero, so that every part of the formula shows.
template <class Layer>
Layer adapted(Layer layer, std::size_t r, float dropout, std::uint64_t seed) {
    Generator init(seed);
    layer.adapter = adapters::detail::make_adapter({.r = r, .alpha = 3, .dropout = dropout, .target_modules = {"x"}},
                                                   layer.in_features(), layer.out_features(), init, nullptr);
    layer.adapter->lora_B.weight.value = test::random_tensor(layer.adapter->lora_B.weight.shape(), seed + 1);
    return layer;
}

// The model's gradients of its loss on `ids`, every parameter with one (in parameters() order).
std::vector<Tensor> gradients_of(models::Model& model, const IdTensor& ids, std::uint64_t dropout_seed,
                                 const std::shared_ptr<Generator>& dropout) {
    ad::Tape tape;
    const ad::UseBackend use(tape);
    dropout->seed(dropout_seed);
    tape.backward(test::loss_of(model, ids, ids));
    std::vector<Tensor> grads;
    for (Param* p : model.parameters()) {
        const Tensor* g = tape.grad(p->value);
        grads.push_back(g ? *g : Tensor(Shape{0}));
    }
    return grads;
}

IdTensor some_ids(std::size_t vocab) {
    IdTensor ids = IdTensor::from_shape({2, 10});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 7 + 3) % vocab);
    return ids;
}

const models::SizeRequest gpt2_sizes{.n_layer = 3, .n_embd = 16, .n_head = 4, .vocab_size = 40, .n_positions = 12};
const models::SizeRequest llama_sizes{.n_layer = 3, .n_embd = 16, .n_head = 4, .vocab_size = 40, .n_positions = 12,
                                      .fields = {{"num_key_value_heads", "2"}, {"intermediate_size", "24"}}};

}  // namespace

TEST_CASE("LoRA: y = W x + b + s · B (A x), by hand, for Linear and Conv1D") {
    const Tensor x = test::random_tensor({2, 3, 5}, 2);
    // Every output against the formula in double precision; w is (out, in), or (in, out) for Conv1D.
    auto check = [&](const Tensor& y, const Tensor& w, const Tensor& bias, const nn::LoRA& lora, bool in_out) {
        const Tensor& a = lora.lora_A.weight.value;  // (r, in)
        const Tensor& b = lora.lora_B.weight.value;  // (out, r)
        const std::size_t r = a.shape()[0], in = a.shape()[1], out = b.shape()[0];
        double worst = 0;
        for (std::size_t row = 0; row < 6; ++row)
            for (std::size_t o = 0; o < out; ++o) {
                double expected = bias(o);
                for (std::size_t i = 0; i < in; ++i) expected += x.data()[row * in + i] * (in_out ? w(i, o) : w(o, i));
                for (std::size_t k = 0; k < r; ++k) {
                    double ax = 0;
                    for (std::size_t i = 0; i < in; ++i) ax += a(k, i) * x.data()[row * in + i];
                    expected += lora.scaling * b(o, k) * ax;
                }
                worst = std::max(worst, std::abs(expected - y.data()[row * out + o]));
            }
        CHECK(worst < 1e-5);
    };
    SUBCASE("Linear") {
        Generator init(3);
        auto layer = adapted(nn::Linear::create(5, 4, init), 2, 0, 4);
        layer.bias->value = test::random_tensor({4}, 7);
        CHECK(layer.adapter->scaling == doctest::Approx(1.5));  // alpha 3 / r 2
        check(layer(test::constant(x)).value(), layer.weight.value, layer.bias->value, *layer.adapter, false);
        CHECK(layer.describe() == "Linear(5 => 4, LoRA(r=2, scaling=1.5))");
    }
    SUBCASE("Conv1D (PEFT's fan_in_fan_out: A and B oriented as for Linear)") {
        Generator init(5);
        auto layer = adapted(nn::Conv1D::create(5, 4, init, 0.5f), 3, 0, 6);
        layer.bias.value = test::random_tensor({4}, 8);
        check(layer(test::constant(x)).value(), layer.weight.value, layer.bias.value, *layer.adapter, true);
    }
}

TEST_CASE("LoRA: gradients against finite differences (A, B and the input; W and b frozen)") {
    Generator init(9);
    SUBCASE("Linear") {
        auto layer = adapted(nn::Linear::create(6, 4, init), 3, 0, 10);
        nn::freeze(layer, [](const std::string& path) { return path == "weight" || path == "bias"; });
        CHECK(tree::parameters(layer).size() == 4);
        test::check_gradients(layer, test::random_tensor({3, 6}, 11), [](auto& l, const Var& x) { return l(x); });
    }
    SUBCASE("Conv1D") {
        auto layer = adapted(nn::Conv1D::create(6, 4, init, 0.3f), 2, 0, 12);
        nn::freeze(layer, [](const std::string& path) { return path == "weight" || path == "bias"; });
        test::check_gradients(layer, test::random_tensor({2, 2, 6}, 13), [](auto& l, const Var& x) { return l(x); });
    }
    SUBCASE("rsLoRA scales by alpha / sqrt(r)") {
        const LoraConfig config{.r = 4, .alpha = 6, .target_modules = {"q"}, .rslora = true};
        CHECK(config.scaling() == doctest::Approx(3.0));
    }
}

TEST_CASE("set_lora: PEFT's targets and names; the base frozen; B zero, so the model starts as it was") {
    for (const char* hf_class : {"GPT2LMHeadModel", "LlamaForCausalLM"}) {
        CAPTURE(std::string(hf_class));
        const bool gpt2 = std::string(hf_class) == "GPT2LMHeadModel";
        auto model = test::table_model(hf_class, gpt2 ? gpt2_sizes : llama_sizes, 1);
        model->set_training(false);
        const IdTensor ids = some_ids(40);
        const Tensor before = test::logits_of(*model, ids).value();
        const std::size_t base_count = model->count_parameters();
        Generator init(2);
        const LoraConfig config{.r = 4, .alpha = 8, .target_modules = gpt2 ? std::vector<std::string>{"c_attn"}
                                                                            : std::vector<std::string>{"q_proj", "v_proj"}};
        CHECK(model->set_lora(config, init) == (gpt2 ? 3u : 6u));
        std::vector<std::string> trainable;
        for (const auto& [path, p] : model->named_parameters())
            if (!p->frozen) trainable.push_back(path);
        if (gpt2) {
            REQUIRE(trainable.size() == 6);
            CHECK(trainable[0] == "transformer.h.0.attn.c_attn.lora_A.weight");
            CHECK(trainable[1] == "transformer.h.0.attn.c_attn.lora_B.weight");
        } else {
            REQUIRE(trainable.size() == 12);
            CHECK(trainable[0] == "model.layers.0.self_attn.q_proj.lora_A.weight");
            CHECK(trainable[3] == "model.layers.0.self_attn.v_proj.lora_B.weight");
        }
        // 16 features in, r 4: A (4, 16); B (out, 4), out 48 (c_attn: q, k, v), 16 (q_proj) or 8 (v_proj: 2 KV heads of 4).
        const std::size_t added = model->count_parameters() - base_count;
        CHECK(added == (gpt2 ? 3 * (4 * 16 + 48 * 4) : 3 * (4 * 16 + 16 * 4 + 4 * 16 + 8 * 4)));
        CHECK(test::same_bits(test::logits_of(*model, ids).value(), before));
    }
    SUBCASE("a regular expression matches the whole path") {
        const LoraConfig config{.r = 2, .target_regex = R"(.*\.h\.[02]\.mlp\.c_fc)"};
        CHECK(config.targets("transformer.h.0.mlp.c_fc"));
        CHECK(!config.targets("transformer.h.1.mlp.c_fc"));
        CHECK(!config.targets("transformer.h.0.mlp.c_fc.x"));
        auto model = test::table_model("GPT2LMHeadModel", gpt2_sizes, 1);
        Generator init(2);
        CHECK(model->set_lora(config, init) == 2);
    }
    SUBCASE("\"all-linear\": every linear layer but the output layer, as PEFT chooses them") {
        auto model = test::table_model("LlamaForCausalLM", llama_sizes, 1);  // untied: it has an lm_head
        Generator init(2);
        CHECK(model->set_lora({.r = 2, .target_modules = {"all-linear"}}, init) == 3u * 7u);
        for (const auto& [path, p] : model->named_parameters())
            if (path.starts_with("lm_head")) CHECK(p->frozen);
        auto gpt2 = test::table_model("GPT2LMHeadModel", gpt2_sizes, 1);  // its head is tied: every Conv1D
        CHECK(gpt2->set_lora({.r = 2, .target_modules = {"all-linear"}}, init) == 3u * 4u);
    }
    SUBCASE("names match whole path segments") {
        const LoraConfig config{.r = 2, .target_modules = {"proj"}};
        CHECK(config.targets("proj"));
        CHECK(config.targets("a.proj"));
        CHECK(!config.targets("a.c_proj"));
    }
}

TEST_CASE("set_lora: bad configs are refused, naming the problem") {
    auto model = test::table_model("GPT2LMHeadModel", gpt2_sizes, 1);
    Generator init(2);
    CHECK_THROWS_WITH_AS(model->set_lora({.r = 0, .target_modules = {"c_attn"}}, init), "LoRA: r must be at least 1", ValueError);
    CHECK_THROWS_WITH_AS(model->set_lora({.r = 2}, init), "LoRA: no target modules (name the layers to adapt, e.g. q_proj, v_proj)",
                         ValueError);
    CHECK_THROWS_WITH_AS(model->set_lora({.r = 2, .dropout = 1, .target_modules = {"c_attn"}}, init),
                         "LoRA: dropout must be in [0, 1), got 1.000000", ValueError);
    CHECK_THROWS_WITH_AS(model->set_lora({.r = 2, .target_regex = "("}, init),
                         doctest::Contains("LoRA: target modules regular expression \"(\": "), ValueError);
    CHECK_THROWS_WITH_AS(model->set_lora({.r = 2, .target_modules = {"q_proj", "v_proj"}}, init),
                         "set_lora: target modules q_proj, v_proj match no linear layer of the model (its linear layers: "
                         "transformer.h.0.attn.c_attn, transformer.h.0.attn.c_proj, transformer.h.0.mlp.c_fc, "
                         "transformer.h.0.mlp.c_proj, transformer.h.1.attn.c_attn, transformer.h.1.attn.c_proj, "
                         "transformer.h.1.mlp.c_fc, transformer.h.1.mlp.c_proj, …)",
                         ValueError);
    REQUIRE(model->set_lora({.r = 2, .target_modules = {"c_attn"}}, init) == 3);
    CHECK_THROWS_WITH_AS(model->set_lora({.r = 2, .target_modules = {"c_attn"}}, init),
                         "set_lora: transformer.h.0.attn.c_attn already has a LoRA adapter", ValueError);
}

TEST_CASE("LoRA: a frozen parameter gets no gradient buffer and no optimiser moments") {
    auto model = test::table_model("GPT2LMHeadModel", gpt2_sizes, 1);
    Generator init(2);
    model->set_lora({.r = 4, .alpha = 8, .target_modules = {"c_attn", "c_fc"}}, init);
    const std::vector<Param*> params = model->parameters();
    const IdTensor ids = some_ids(40);
    ad::Tape tape;
    train::MicroBatches micro(params);
    const std::size_t before = memory::live_bytes();
    const auto step = micro.run(tape, 2, [&](std::size_t) { return test::loss_of(*model, ids, ids); });
    std::size_t trainable_bytes = 0, frozen = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        CAPTURE(i);
        if (params[i]->frozen) {
            ++frozen;
            CHECK(step.grads[i] == nullptr);
            CHECK(tape.grad(params[i]->value) == nullptr);
        } else {
            REQUIRE(step.grads[i] != nullptr);
            trainable_bytes += params[i]->size() * sizeof(float);
        }
    }
    CHECK(frozen > 0);
    // What stays allocated after the step: the gradient sums of the adapters only (and the tape's
    // buffers for them), never a base-sized buffer.
    const std::size_t kept = memory::live_bytes() - before;
    MESSAGE("kept after the step: " << kept << " bytes; the adapters' parameters: " << trainable_bytes);
    CHECK(kept <= 3 * trainable_bytes);

    auto optimiser = model->trainer_adamw({.lr = 1e-3f});
    const std::size_t with_optimiser = memory::live_bytes() - before - kept;
    CHECK(with_optimiser <= 2 * trainable_bytes + 4096);  // two moments of the adapters; none for the base
}

// Under AddressSanitizer (CI's second half, -O0) two policies of different shape, not all four: the
// release half checks every one, and the sanitizers look for memory faults, which the others share.
#ifdef REMAT_ASAN
constexpr const char* lora_checked_policies[] = {"every:2", "selective"};
#else
constexpr const char* lora_checked_policies[] = {"blocks", "every:2", "sqrt", "selective"};
#endif

TEST_CASE("LoRA under checkpointing: gradients bitwise those of the plain LoRA model, either order, every policy, fp32 and bf16") {
    const IdTensor ids = some_ids(40);
    for (const char* hf_class : {"GPT2LMHeadModel", "LlamaForCausalLM"}) {
        const bool gpt2 = std::string(hf_class) == "GPT2LMHeadModel";
        const LoraConfig config{.r = 4, .alpha = 8, .dropout = 0.2f,
                                .target_modules = gpt2 ? std::vector<std::string>{"c_attn", "c_proj", "c_fc"}
                                                       : std::vector<std::string>{"q_proj", "k_proj", "v_proj", "o_proj",
                                                                                  "gate_proj", "up_proj", "down_proj"}};
        for (const Precision precision : {Precision::fp32, Precision::bf16}) {
            const Autocast autocast(precision);
            auto dropout = std::make_shared<Generator>(5);
            auto lora_model = [&](const Policy& policy, bool lora_first) {
                auto model = test::table_model(hf_class, gpt2 ? gpt2_sizes : llama_sizes, 1, lora_first ? Policy::none() : policy,
                                               dropout);
                Generator init(3);
                model->set_lora(config, init, dropout);
                if (lora_first) model->set_policy(policy);
                test::randomise_lora_B(*model, 100, 0.1f);
                model->set_training(true);
                return model;
            };
            auto plain = lora_model(Policy::none(), true);
            const std::vector<Tensor> expected = gradients_of(*plain, ids, 77, dropout);
            for (const char* policy : lora_checked_policies)
                for (const bool lora_first : {true, false}) {
                    CAPTURE(std::string(hf_class));
                    CAPTURE(std::string(policy));
                    CAPTURE(lora_first);
                    CAPTURE(static_cast<int>(precision));
                    auto model = lora_model(Policy::parse(policy), lora_first);
                    const std::vector<Tensor> got = gradients_of(*model, ids, 77, dropout);
                    REQUIRE(got.size() == expected.size());
                    std::size_t same = 0, with_gradient = 0;
                    for (std::size_t i = 0; i < got.size(); ++i) {
                        same += test::same_bits(got[i], expected[i]);
                        with_gradient += got[i].size() > 0;
                    }
                    CHECK(same == got.size());
                    // The adapters' A and B only: 4 layers (c_proj is two) or 7 per block, 3 blocks.
                    CHECK(with_gradient == (gpt2 ? 24u : 42u));
                }
        }
    }
}

TEST_CASE("LoRA with a planned policy, GPT-2 and BERT: gradients bitwise those of the plain LoRA model") {
    const IdTensor ids = some_ids(40);
    const models::SizeRequest bert_sizes{.n_layer = 3, .n_embd = 16, .n_head = 4, .vocab_size = 40, .n_positions = 12};
    for (const char* hf_class : {"GPT2LMHeadModel", "BertForMaskedLM"}) {
        CAPTURE(std::string(hf_class));
        const bool gpt2 = std::string(hf_class) == "GPT2LMHeadModel";
        const LoraConfig config{.r = 4, .alpha = 8, .dropout = 0.2f,
                                .target_modules = gpt2 ? std::vector<std::string>{"c_attn", "c_fc"}
                                                       : std::vector<std::string>{"query", "value"}};
        auto dropout = std::make_shared<Generator>(5);
        auto lora_model = [&](const Policy& policy) {
            auto model = test::table_model(hf_class, gpt2 ? gpt2_sizes : bert_sizes, 1, policy, dropout);
            Generator init(3);
            model->set_lora(config, init, dropout);
            test::randomise_lora_B(*model, 300, 0.1f);
            model->set_training(true);
            return model;
        };
        auto plain = lora_model(Policy::none());
        const std::vector<Tensor> expected = gradients_of(*plain, ids, 77, dropout);
        std::size_t with_gradient = 0;
        for (const Tensor& g : expected) with_gradient += g.size() > 0;
        CHECK(with_gradient == 12);  // A and B of 2 adapters in each of 3 blocks

        auto model = lora_model(Policy::blocks());
        const planning::Profile profile =
            model->profile_checkpointing([&] { return test::loss_of(*model, ids, ids); }, {.rounds = 1});
        const std::size_t low = planning::smallest_budget(profile), high = planning::predict(profile, Policy::none()).peak;
        REQUIRE(low < high);
        const auto plan = planning::plan_checkpointing(profile, low + (high - low) / 3);
        REQUIRE(plan);
        MESSAGE(std::string(hf_class) << " with LoRA, planned at a third of the way from the smallest budget: " << plan->to_string());
        model->set_policy(*plan);
        const std::vector<Tensor> got = gradients_of(*model, ids, 77, dropout);
        REQUIRE(got.size() == expected.size());
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(test::same_bits(got[i], expected[i]));
    }
}

TEST_CASE("merge_lora: W += s·B·A gives the adapted model's logits, a plain model again") {
    for (const char* hf_class : {"GPT2LMHeadModel", "LlamaForCausalLM"}) {
        CAPTURE(std::string(hf_class));
        const bool gpt2 = std::string(hf_class) == "GPT2LMHeadModel";
        auto model = test::table_model(hf_class, gpt2 ? gpt2_sizes : llama_sizes, 1);
        model->set_training(false);
        const std::size_t base_count = model->count_parameters();
        Generator init(2);
        model->set_lora({.r = 4, .alpha = 16, .target_modules = gpt2 ? std::vector<std::string>{"c_attn", "c_fc"}
                                                                     : std::vector<std::string>{"q_proj", "down_proj"}},
                        init);
        test::randomise_lora_B(*model, 200, 0.2f);
        const IdTensor ids = some_ids(40);
        const Tensor adapted_logits = test::logits_of(*model, ids).value();
        CHECK(model->merge_lora() == 6);
        CHECK(model->count_parameters() == base_count);
        for (Param* p : model->parameters()) CHECK(!p->frozen);
        const Tensor merged = test::logits_of(*model, ids).value();
        double worst = 0, scale = 0;
        for (std::size_t i = 0; i < merged.size(); ++i) {
            worst = std::max(worst, std::abs(double(merged.data()[i]) - adapted_logits.data()[i]));
            scale = std::max(scale, std::abs(double(adapted_logits.data()[i])));
        }
        MESSAGE(std::string(hf_class) << ": merged against adapted logits, largest difference " << worst << " of " << scale);
        CHECK(worst <= 1e-5 * scale);
    }
}

TEST_CASE("a base held in bf16: bitwise the float32 base under Autocast(bf16), under checkpointing too; half the weights' memory") {
    const IdTensor ids = some_ids(40);
    for (const char* hf_class : {"GPT2LMHeadModel", "LlamaForCausalLM"}) {
        CAPTURE(std::string(hf_class));
        const bool gpt2 = std::string(hf_class) == "GPT2LMHeadModel";
        const LoraConfig config{.r = 4, .alpha = 8, .dropout = 0.2f,
                                .target_modules = gpt2 ? std::vector<std::string>{"c_attn", "c_fc"}
                                                       : std::vector<std::string>{"q_proj", "v_proj", "down_proj"}};
        auto dropout = std::make_shared<Generator>(5);
        auto lora_model = [&](const char* policy, bool held) {
            auto model = test::table_model(hf_class, gpt2 ? gpt2_sizes : llama_sizes, 1, Policy::parse(policy), dropout);
            Generator init(3);
            model->set_lora(config, init, dropout);
            test::randomise_lora_B(*model, 100, 0.1f);
            if (held) {
                const std::size_t before = memory::live_bytes();
                std::size_t weight_bytes = 0;  // of the frozen projections (2-d weights but the embeddings)
                for (const auto& [path, p] : model->named_parameters())
                    if (p->frozen && p->shape().size() == 2 && !path.ends_with("wte.weight") && !path.ends_with("wpe.weight") &&
                        !path.ends_with("embed_tokens.weight"))
                        weight_bytes += p->size() * sizeof(float);
                const std::size_t held_count = model->hold_base_in_bf16();
                CHECK(held_count == (gpt2 ? 12u : 22u));  // every frozen projection of 3 blocks (Llama: 7 each, and lm_head)
                CHECK(before - memory::live_bytes() == weight_bytes / 2);  // float32 freed, bf16 kept
            }
            model->set_training(true);
            return model;
        };
        const Autocast bf16(Precision::bf16);
        auto plain = lora_model("none", false);
        const std::vector<Tensor> expected = gradients_of(*plain, ids, 77, dropout);
        for (const char* policy : {"none", "blocks", "selective"}) {
            CAPTURE(std::string(policy));
            auto held = lora_model(policy, true);
            const std::vector<Tensor> got = gradients_of(*held, ids, 77, dropout);
            REQUIRE(got.size() == expected.size());
            std::size_t same = 0;
            for (std::size_t i = 0; i < got.size(); ++i) same += test::same_bits(got[i], expected[i]);
            CHECK(same == got.size());
        }
        // Outside Autocast the held products still run in bf16 (there are no float32 values), the rest in
        // float32: the float32 model's logits to the base's bf16 rounding.
        auto held = lora_model("none", true);
        held->set_training(false);
        plain->set_training(false);
        const Autocast fp32(Precision::fp32);
        const Tensor got = test::logits_of(*held, ids).value(), want = test::logits_of(*plain, ids).value();
        double largest = 0, worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            largest = std::max(largest, static_cast<double>(std::abs(want.data()[i])));
            worst = std::max(worst, static_cast<double>(std::abs(got.data()[i] - want.data()[i])));
        }
        CHECK(worst > 0);
        CHECK(worst / largest < 2e-2);
    }
}

TEST_CASE("a parameter held in bf16: frozen only, refused where float32 values are needed, float32 again when thawed or merged") {
    auto model = test::table_model("LlamaForCausalLM", llama_sizes, 1);
    Generator init(3);
    model->set_lora({.r = 2, .alpha = 4, .target_modules = {"q_proj"}}, init);
    test::randomise_lora_B(*model, 100, 0.1f);
    const Tensor before_hold = test::logits_of(*model, some_ids(40)).value();
    Param loose{Tensor(Shape{2, 2})};
    CHECK_THROWS_WITH_AS(loose.hold_bf16(), "hold_bf16: only a frozen parameter may be held in bf16 (an update needs float32 values)",
                         ValueError);
    model->hold_base_in_bf16();
    CHECK_THROWS_WITH_AS(model->named_tensors(), doctest::Contains("model.layers.0.self_attn.q_proj.weight is held in bf16"), ValueError);
    // Merging widens each held weight (exactly its bf16 values) before adding s·B·A.
    CHECK(model->merge_lora() == 3);
    for (Param* p : model->parameters()) CHECK_FALSE(p->held_bf16());
    const Tensor merged = test::logits_of(*model, some_ids(40)).value();
    double largest = 0, worst = 0;
    for (std::size_t i = 0; i < merged.size(); ++i) {
        largest = std::max(largest, static_cast<double>(std::abs(before_hold.data()[i])));
        worst = std::max(worst, static_cast<double>(std::abs(merged.data()[i] - before_hold.data()[i])));
    }
    MESSAGE("merged from a bf16 base vs the float32 adapted model: " << worst / largest << " of the largest logit");
    CHECK(worst / largest < 2e-2);  // the base's bf16 rounding
}
