// Generation: the sampling rules on fixed logits against their definitions; the KV cache against full
// forwards (greedy tokens identical, logits equal to float rounding); left-padded batches against each
// prompt alone; and every causal LM against float64 PyTorch greedy continuations
// (tests/fixtures/make_generation_fixtures.py, transformers 4.57's generate).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "models/gpt2/architecture.hpp"
#include "models/llama/architecture.hpp"
#include "models/mistral/architecture.hpp"
#include "models/qwen2/architecture.hpp"
#include "remat/generation/generate.hpp"
#include "remat/hf/safetensors.hpp"
#include "remat/layers/modes.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
namespace fs = std::filesystem;
using Ids = std::vector<std::int64_t>;

namespace {

using test::fixtures;

std::vector<double> probabilities(std::initializer_list<double> p) { return std::vector<double>(p); }

void check_close(const std::vector<double>& got, const std::vector<double>& expected) {
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-6));  // the logits are float32
}

// The row's largest |difference| over its largest |value|.
double relative_row_difference(const float* a, const float* b, std::size_t n) {
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
        scale = std::max(scale, std::abs(static_cast<double>(b[i])));
    }
    return diff / scale;
}

std::int64_t argmax(const float* x, std::size_t n) { return std::max_element(x, x + n) - x; }

// Greedy decoding step by step with the cache, against the last-position logits of a full forward of the
// whole sequence so far (batch 1, no cache): the same token every step, logits equal to float rounding.
// Returns the largest relative difference.
template <class Model>
double cached_against_full(Model& model, const Ids& prompt, std::size_t steps) {
    ad::NoGrad no_grad;
    nn::KVCache cache(1, prompt.size() + steps);
    Ids sequence = prompt;
    IdTensor feed = IdTensor::from_shape({1, prompt.size()});
    std::copy(prompt.begin(), prompt.end(), feed.begin());
    double worst = 0;
    for (std::size_t s = 0; s < steps; ++s) {
        const Var cached = model.next_logits(feed, cache);
        IdTensor all = IdTensor::from_shape({1, sequence.size()});
        std::copy(sequence.begin(), sequence.end(), all.begin());
        const Var full = model(all);
        const std::size_t V = cached.shape()[1], T = sequence.size();
        const float* last = full.value().data() + (T - 1) * V;
        worst = std::max(worst, relative_row_difference(cached.value().data(), last, V));
        const std::int64_t token = argmax(cached.value().data(), V);
        CHECK(token == argmax(last, V));
        sequence.push_back(token);
        feed = IdTensor::from_shape({1, 1});
        feed(0, 0) = token;
    }
    return worst;
}

std::vector<Ids> rows_of(const IdTensor& ids, const IdTensor& mask) {
    std::vector<Ids> rows(ids.shape()[0]);
    for (std::size_t b = 0; b < ids.shape()[0]; ++b)
        for (std::size_t t = 0; t < ids.shape()[1]; ++t)
            if (mask.dimension() == 0 || mask(b, t) != 0) rows[b].push_back(ids(b, t));
    return rows;
}

// One model against its float64 greedy continuations: the left-padded batch and each prompt alone
// through generate() give the reference's tokens up to its first near-tie; teacher-forced on the
// reference's tokens, every step's logits are within float rounding of the reference's.
template <class Model>
void check_against_reference(Model& model, const std::string& name) {
    CAPTURE(name);
    const auto ref = hf::SafetensorsFile::open(fixtures / "generation" / (name + "-greedy.safetensors"));
    auto ints = [&](const std::string& key) { return ref.read_int(*ref.find(key)); };
    double worst = 0;
    for (const std::string part : {"batch", "single0", "single1"}) {
        CAPTURE(part);
        const IdTensor ids = ints(part + ".input_ids");
        const IdTensor mask = ref.find(part + ".attention_mask") ? ints(part + ".attention_mask") : IdTensor();
        const IdTensor expected = ints(part + ".generated_ids"), near_tie = ints(part + ".near_tie");
        const Tensor logits = ref.read_float(*ref.find(part + ".logits"));
        const std::size_t B = expected.shape()[0], N = expected.shape()[1], V = logits.shape()[2];

        generation::Options options;
        options.max_new_tokens = N;
        const generation::Result r = generation::generate(model, rows_of(ids, mask), options);
        for (std::size_t b = 0; b < B; ++b) {
            REQUIRE(r.tokens[b].size() == N);
            for (std::size_t s = 0; s < N && near_tie(b, s) == 0; ++s) CHECK(r.tokens[b][s] == expected(b, s));
        }

        ad::NoGrad no_grad;  // teacher forcing: the reference's own tokens fed back
        nn::KVCache cache(B, ids.shape()[1] + N);
        Var step = model.next_logits(ids, cache, mask);
        for (std::size_t s = 0; s < N; ++s) {
            for (std::size_t b = 0; b < B; ++b)
                worst = std::max(worst, relative_row_difference(step.value().data() + b * V, logits.data() + (b * N + s) * V, V));
            if (s + 1 == N) break;
            IdTensor next = IdTensor::from_shape({B, 1});
            for (std::size_t b = 0; b < B; ++b) next(b, 0) = expected(b, s);
            step = model.next_logits(next, cache);
        }
    }
    MESSAGE(name << ": largest logit difference against float64, relative to the row's largest logit: " << worst);
    CHECK(worst < 1e-5);
}

}  // namespace

TEST_CASE("sampling: HF's logits processors on fixed logits") {
    using generation::Sampling;
    SUBCASE("repetition penalty divides positive logits and multiplies negative ones, once per token") {
        const std::vector<float> logits{2, -2, 1};
        CHECK(generation::penalized(logits, Ids{0, 1, 1}, 2.0) == std::vector<double>{1, -4, 1});
    }
    SUBCASE("temperature") {
        const std::vector<float> logits{0, static_cast<float>(std::log(2.0))};
        check_close(generation::distribution(logits, {.do_sample = true, .temperature = 0.5, .top_k = 0}, {}),
                    probabilities({0.2, 0.8}));  // ∝ 1, 2² = 4
    }
    SUBCASE("top-k keeps the k largest") {
        const std::vector<float> logits{1, 2, 3, 0};
        const double e2 = std::exp(2.0), e3 = std::exp(3.0);
        check_close(generation::distribution(logits, {.do_sample = true, .top_k = 2}, {}), probabilities({0, e2 / (e2 + e3), e3 / (e2 + e3), 0}));
    }
    SUBCASE("top-p keeps the fewest largest tokens whose probabilities pass top_p") {
        std::vector<float> logits;
        for (double p : {0.5, 0.3, 0.15, 0.05}) logits.push_back(static_cast<float>(std::log(p)));
        // Ascending: 0.05, 0.15, 0.3, 0.5 with sums 0.05, 0.2, 0.5, 1: those with a sum ≤ 1 − 0.8 go.
        const std::vector<double> p = generation::distribution(logits, {.do_sample = true, .top_k = 0, .top_p = 0.8}, {});
        CHECK(p[0] == doctest::Approx(0.5 / 0.8).epsilon(1e-6));
        CHECK(p[1] == doctest::Approx(0.3 / 0.8).epsilon(1e-6));
        CHECK(p[2] == 0);
        CHECK(p[3] == 0);
    }
    SUBCASE("greedy is the first largest logit after the penalty") {
        Generator rng(1);
        const std::vector<float> logits{3, 5, 5, 4.5f};
        CHECK(generation::choose(logits, {}, {}, rng) == 1);
        CHECK(generation::choose(logits, {.repetition_penalty = 1.2}, Ids{1, 2}, rng) == 3);  // 5/1.2 < 4.5
    }
    SUBCASE("draws follow the distribution; the same seed, the same draws") {
        const std::vector<float> logits{0, static_cast<float>(std::log(4.0)), -100};
        const Sampling s{.do_sample = true, .top_k = 0};
        Generator a(7), b(7);
        const int n = 20000;
        int ones = 0;
        for (int i = 0; i < n; ++i) {
            const std::int64_t t = generation::choose(logits, s, {}, a);
            CHECK(t == generation::choose(logits, s, {}, b));
            ones += t == 1;
        }
        const double sigma = std::sqrt(n * 0.8 * 0.2);
        CHECK(std::abs(ones - n * 0.8) < 5 * sigma);
    }
    SUBCASE("settings outside their range are refused") {
        const std::vector<float> logits{0, 1};
        CHECK_THROWS_WITH_AS(generation::distribution(logits, {.do_sample = true, .top_p = 0}, {}), "top_p must be in (0, 1], got 0", ValueError);
        CHECK_THROWS_WITH_AS(generation::distribution(logits, {.do_sample = true, .temperature = -1}, {}),
                             "temperature must be a positive number, got -1", ValueError);
        // The penalty is used greedy too: 0 would divide by zero.
        CHECK_THROWS_WITH_AS(generation::check({.repetition_penalty = 0}), "repetition_penalty must be a positive number, got 0", ValueError);
        CHECK_NOTHROW(generation::check({.temperature = -1}));  // greedy: the temperature is not used
    }
}

TEST_CASE("generation: the KV cache gives a full forward's tokens and logits") {
    auto gpt2 = models::from_pretrained<gpt2::LMHead>(fixtures / "gpt2-tiny");
    auto llama = models::from_pretrained<llama::ForCausalLM>(fixtures / "llama" / "llama-gqa");
    auto llama3 = models::from_pretrained<llama::ForCausalLM>(fixtures / "llama" / "llama3-mqa-tied-bf16");
    auto qwen2 = models::from_pretrained<qwen2::ForCausalLM>(fixtures / "llama" / "qwen2-bias");
    auto mistral = models::from_pretrained<mistral::ForCausalLM>(fixtures / "llama" / "mistral-window");
    nn::testmode(gpt2), nn::testmode(llama), nn::testmode(llama3), nn::testmode(qwen2), nn::testmode(mistral);
    const Ids prompt{5, 9, 2, 33, 17};
    const double g = cached_against_full(gpt2, {5, 9, 2}, 12);
    const double l = cached_against_full(llama, prompt, 12);
    const double l3 = cached_against_full(llama3, prompt, 12);
    const double q = cached_against_full(qwen2, prompt, 12);
    const double m = cached_against_full(mistral, prompt, 12);  // past the window of 4
    MESSAGE("cached against full forward, largest logit difference relative to the row's largest: GPT-2 " << g << ", Llama " << l
            << ", Llama 3 (MQA, llama3 rope) " << l3 << ", Qwen2 " << q << ", Mistral " << m);
    CHECK(std::max({g, l, l3, q, m}) < 1e-5);
}

TEST_CASE("generation: every causal LM against float64 PyTorch greedy continuations") {
    auto gpt2 = models::from_pretrained<gpt2::LMHead>(fixtures / "gpt2-tiny");
    check_against_reference(gpt2, "gpt2-tiny");
    auto llama = models::from_pretrained<llama::ForCausalLM>(fixtures / "llama" / "llama-gqa");
    check_against_reference(llama, "llama-gqa");
    auto llama3 = models::from_pretrained<llama::ForCausalLM>(fixtures / "llama" / "llama3-mqa-tied-bf16");
    check_against_reference(llama3, "llama3-mqa-tied-bf16");
    auto qwen2 = models::from_pretrained<qwen2::ForCausalLM>(fixtures / "llama" / "qwen2-bias");
    check_against_reference(qwen2, "qwen2-bias");
    auto mistral = models::from_pretrained<mistral::ForCausalLM>(fixtures / "llama" / "mistral-window");
    check_against_reference(mistral, "mistral-window");
}

TEST_CASE("generate: stop ids, the context, streaming, and bad requests") {
    auto gpt2 = models::from_pretrained<gpt2::LMHead>(fixtures / "gpt2-tiny");
    generation::Options o;
    o.max_new_tokens = 12;
    const generation::Result free = generation::generate(gpt2, {{5, 9, 2}}, o);
    SUBCASE("a stop id ends its sequence and is kept") {
        o.stop_ids = {free.tokens[0][3]};
        const generation::Result r = generation::generate(gpt2, {{5, 9, 2}}, o);
        const auto first = std::find(free.tokens[0].begin(), free.tokens[0].end(), o.stop_ids[0]);
        CHECK(r.tokens[0] == Ids(free.tokens[0].begin(), first + 1));
        CHECK(r.stopped[0]);
    }
    SUBCASE("the context ends generation: 16 positions hold a 10-token prompt and 6 fed tokens, so 7 come out") {
        o.max_new_tokens = 50;
        const generation::Result r = generation::generate(gpt2, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, o);
        CHECK(r.tokens[0].size() == 7);
        CHECK(r.context_full);
        CHECK(r.cache_bytes == 2 * 2 * 16 * 16 * sizeof(float));  // K and V, 2 layers, 16 positions, width 16 (gpt2-tiny)
    }
    SUBCASE("a checkpointed model generates the same tokens") {
        auto checkpointed = set_checkpointing(models::from_pretrained<gpt2::LMHead>(fixtures / "gpt2-tiny"), Policy::parse("blocks"));
        CHECK(generation::generate(checkpointed, {{5, 9, 2}}, o).tokens == free.tokens);
    }
    SUBCASE("on_token sees every token as it is chosen") {
        Ids streamed;
        o.on_token = [&](std::size_t sequence, std::int64_t token) {
            CHECK(sequence == 0);
            streamed.push_back(token);
            return true;
        };
        CHECK(generation::generate(gpt2, {{5, 9, 2}}, o).tokens[0] == streamed);
        CHECK(streamed == free.tokens[0]);
    }
    SUBCASE("on_token returning false ends the sequence there") {
        o.on_token = [&](std::size_t, std::int64_t) { return false; };
        const generation::Result r = generation::generate(gpt2, {{5, 9, 2}}, o);
        CHECK(r.tokens[0] == Ids{free.tokens[0][0]});
        CHECK(r.stopped[0]);
    }
    SUBCASE("a context shorter than the model's") {
        o.context_length = 5;
        CHECK(generation::generate(gpt2, {{5, 9, 2}}, o).tokens[0].size() == 3);
    }
    SUBCASE("sampling: the same seed gives the same tokens") {
        o.sampling = {.do_sample = true, .temperature = 1.5, .top_k = 20, .top_p = 0.9};
        o.seed = 3;
        const Ids a = generation::generate(gpt2, {{5, 9, 2}}, o).tokens[0];
        CHECK(generation::generate(gpt2, {{5, 9, 2}}, o).tokens[0] == a);
    }
    SUBCASE("bad requests") {
        CHECK_THROWS_WITH_AS(generation::generate(gpt2, {}, o), "generate: no prompt", ValueError);
        CHECK_THROWS_WITH_AS(generation::generate(gpt2, {{1}, {}}, o), "generate: prompt 1 is empty", ValueError);
        CHECK_THROWS_WITH_AS(generation::generate(gpt2, {Ids(17, 1)}, o), "generate: a prompt of 17 tokens is longer than the model's context of 16",
                             ValueError);
        o.max_new_tokens = 0;
        CHECK_THROWS_WITH_AS(generation::generate(gpt2, {{1}}, o), "generate: max_new_tokens must be at least 1", ValueError);
    }
}
