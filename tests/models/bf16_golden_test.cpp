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

#include "remat/ad/tape.hpp"
#include "remat/ops/precision.hpp"
#include "tests/support/compare_reference.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/table_model.hpp"

using namespace remat;

namespace {
using test::fixtures;

// The model as `remat run --precision bf16` runs it: through the architecture table.
void check_bf16(models::Model& model, const std::filesystem::path& reference_file, const std::string& what) {
    CAPTURE(what);
    model.set_training(false);
    const auto reference = hf::SafetensorsFile::open(reference_file);
    const IdTensor ids = reference.read_int(*reference.find("input_ids"));
    const IdTensor labels = reference.read_int(*reference.find("labels"));
    const IdTensor mask = reference.find("attention_mask") ? reference.read_int(*reference.find("attention_mask")) : IdTensor();
    data::Batch batch{.ids = {{"input_ids", ids}}};
    if (mask.size()) batch.ids["attention_mask"] = mask;
    ad::Tape tape;
    const ad::UseBackend use(tape);
    const Autocast bf16(Precision::bf16);
    const Var y = model.logits(batch);
    const Tensor logits = y.value();
    const Var loss_var = model.loss(y, labels);
    const float loss = loss_var.value()();
    tape.backward(loss_var);
    std::vector<std::pair<std::string, const Tensor*>> grads;
    for (const auto& [path, p] : model.named_parameters()) grads.emplace_back(path, tape.grad(p->value));
    const double logit_difference = test::relative_difference(logits, reference.read_float(*reference.find("logits")));
    const float expected_loss = reference.read_float(*reference.find("loss"))();
    MESSAGE(what << " in bf16: logits within " << logit_difference << " of the largest logit; loss " << loss
                 << " against " << expected_loss);
    CHECK(logit_difference < 2e-2);
    CHECK(logit_difference > 1e-5);  // bf16 really ran: fp32 is within 1e-5
    CHECK(loss == doctest::Approx(expected_loss).epsilon(1e-2));
    std::size_t expected = 0;
    for (const hf::TensorInfo& t : reference.tensors()) expected += t.name.starts_with("grad.");
    test::compare_named_gradients(grads, reference, expected, 5e-2);
}
}  // namespace

TEST_CASE("bf16: GPT-2 against the float64 reference") {
    auto model = test::load_table_model("GPT2LMHeadModel", fixtures / "gpt2-tiny");
    check_bf16(*model, fixtures / "gpt2-tiny-reference.safetensors", "GPT-2");
}

TEST_CASE("bf16: Llama (GQA, untied head; a left-padded batch) against the float64 reference") {
    auto model = test::load_table_model("LlamaForCausalLM", fixtures / "llama" / "llama-gqa");
    check_bf16(*model, fixtures / "llama" / "llama-gqa-reference.safetensors", "Llama");
    check_bf16(*model, fixtures / "llama" / "llama-gqa-left-reference.safetensors", "Llama, left-padded");
}

TEST_CASE("bf16: Llama 3 (tied head through the embedding, MQA) against the float64 reference") {
    auto model = test::load_table_model("LlamaForCausalLM", fixtures / "llama" / "llama3-mqa-tied-bf16");
    check_bf16(*model, fixtures / "llama" / "llama3-mqa-tied-bf16-reference.safetensors", "Llama 3");
}
