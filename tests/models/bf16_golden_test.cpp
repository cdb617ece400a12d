// bf16 mixed precision against the float64 PyTorch references of the fp32 golden tests
// (tests/fixtures/make_model_fixtures.py, make_llama_fixtures.py): logits, loss and every gradient
// within the bounds docs/precision.md states, with the measured differences reported.
//
// The bounds: each product rounds both inputs to bf16 (a relative error of at most 2⁻⁹ each) and
// accumulates in fp32, so one product is off by up to about 0.4 % of Σ|a·b|; through a few layers,
// the softmax and the loss that stays within a few percent. PyTorch's autocast puts GPT-2 small's
// logits within 0.9 % of the largest logit. Stated: logits within 2 % of the largest logit, the loss
// within 1 %, every gradient within 5 % of its tensor's largest magnitude.
#include <doctest/doctest.h>

#include "models/gpt2/pretrained.hpp"
#include "models/llama/architecture.hpp"
#include "remat/layers/modes.hpp"
#include "remat/ops/precision.hpp"
#include "remat/train/gradient.hpp"
#include "tests/support/compare_reference.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;

namespace {
using test::fixtures;

template <class Model>
void check_bf16(Model& model, const std::filesystem::path& reference_file, const std::string& what) {
    CAPTURE(what);
    nn::testmode(model);
    const auto reference = hf::SafetensorsFile::open(reference_file);
    const IdTensor ids = reference.read_int(*reference.find("input_ids"));
    const IdTensor labels = reference.read_int(*reference.find("labels"));
    const IdTensor mask = reference.find("attention_mask") ? reference.read_int(*reference.find("attention_mask")) : IdTensor();
    Tensor logits;
    const Autocast bf16(Precision::bf16);
    auto [loss, grads] = train::withgradient([&](auto& m) {
        Var y = mask.size() ? m(ids, mask) : m(ids);
        logits = y.value();
        return m.loss(y, labels);
    }, model);
    const double logit_difference = test::relative_difference(logits, reference.read_float(*reference.find("logits")));
    const float expected_loss = reference.read_float(*reference.find("loss"))();
    MESSAGE(what << " in bf16: logits within " << logit_difference << " of the largest logit; loss " << loss
                 << " against " << expected_loss);
    CHECK(logit_difference < 2e-2);
    CHECK(logit_difference > 1e-5);  // bf16 really ran: fp32 is within 1e-5
    CHECK(loss == doctest::Approx(expected_loss).epsilon(1e-2));
    std::size_t expected = 0;
    for (const hf::TensorInfo& t : reference.tensors()) expected += t.name.starts_with("grad.");
    test::compare_gradients(grads, reference, expected, 5e-2);
}
}  // namespace

TEST_CASE("bf16: GPT-2 against the float64 reference") {
    auto model = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    check_bf16(model, fixtures / "gpt2-tiny-reference.safetensors", "GPT-2");
}

TEST_CASE("bf16: Llama (GQA, untied head; a left-padded batch) against the float64 reference") {
    auto model = models::from_pretrained<llama::ForCausalLM>(fixtures / "llama" / "llama-gqa");
    check_bf16(model, fixtures / "llama" / "llama-gqa-reference.safetensors", "Llama");
    check_bf16(model, fixtures / "llama" / "llama-gqa-left-reference.safetensors", "Llama, left-padded");
}

TEST_CASE("bf16: Llama 3 (tied head through the embedding, MQA) against the float64 reference") {
    auto model = models::from_pretrained<llama::ForCausalLM>(fixtures / "llama" / "llama3-mqa-tied-bf16");
    check_bf16(model, fixtures / "llama" / "llama3-mqa-tied-bf16-reference.safetensors", "Llama 3");
}
