// The Llama family against independent float64 PyTorch references (tests/fixtures/make_llama_fixtures.py,
// written from transformers 4.57's modeling code): logits, loss and every parameter gradient, for GQA
// with an untied head, Llama 3 (llama3 rope scaling, tied, MQA, a BF16 file), Qwen2's biases, Mistral's
// window shorter than the sequence, a sharded checkpoint, and right- and left-padded batches.
#include <doctest/doctest.h>

#include "models/llama/architecture.hpp"
#include "models/mistral/architecture.hpp"
#include "models/qwen2/architecture.hpp"
#include "remat/layers/modes.hpp"
#include "remat/train/gradient.hpp"
#include "tests/support/compare_reference.hpp"

using namespace remat;

namespace {
const std::filesystem::path llama_fixtures = std::filesystem::path(REMAT_FIXTURES) / "llama";

template <class Facts>
void check_case(const std::string& folder, const std::string& reference_name) {
    CAPTURE(reference_name);
    hf::LoadReport report;
    auto model = models::from_pretrained<Facts>(llama_fixtures / folder, &report);
    CHECK(report.warnings.empty());
    nn::testmode(model);
    const auto reference = hf::SafetensorsFile::open(llama_fixtures / (reference_name + "-reference.safetensors"));
    const IdTensor ids = reference.read_int(*reference.find("input_ids"));
    const IdTensor labels = reference.read_int(*reference.find("labels"));
    const IdTensor mask = reference.find("attention_mask") ? reference.read_int(*reference.find("attention_mask")) : IdTensor();
    Tensor logits;
    auto [loss, grads] = train::withgradient([&](auto& m) {
        Var y = m(ids, mask);
        logits = y.value();
        return m.loss(y, labels);
    }, model);
    const double logit_difference = test::relative_difference(logits, reference.read_float(*reference.find("logits")));
    MESSAGE(reference_name << " logits: largest difference " << logit_difference << " of the largest logit; loss " << loss);
    CHECK(logit_difference < 1e-5);
    CHECK(loss == doctest::Approx(reference.read_float(*reference.find("loss"))()).epsilon(1e-5));
    std::size_t expected = 0;
    for (const hf::TensorInfo& t : reference.tensors()) expected += t.name.starts_with("grad.");
    test::compare_gradients(grads, reference, expected);
}
}  // namespace

TEST_CASE("Llama matches the PyTorch reference: GQA, untied head") {
    check_case<llama::ForCausalLM>("llama-gqa", "llama-gqa");
}
TEST_CASE("Llama matches the PyTorch reference: a right-padded and a left-padded batch") {
    check_case<llama::ForCausalLM>("llama-gqa", "llama-gqa-right");
    check_case<llama::ForCausalLM>("llama-gqa", "llama-gqa-left");
}
TEST_CASE("Llama 3 matches the PyTorch reference: llama3 rope scaling, tied, MQA, head_dim 12, a BF16 file") {
    check_case<llama::ForCausalLM>("llama3-mqa-tied-bf16", "llama3-mqa-tied-bf16");
}
TEST_CASE("Qwen2 matches the PyTorch reference: q, k, v biases") {
    check_case<qwen2::ForCausalLM>("qwen2-bias", "qwen2-bias");
}
TEST_CASE("Mistral matches the PyTorch reference: a window of 4 over 12 tokens") {
    check_case<mistral::ForCausalLM>("mistral-window", "mistral-window");
}
TEST_CASE("Llama matches the PyTorch reference: a sharded checkpoint, linear rope scaling (older spelling), biases") {
    check_case<llama::ForCausalLM>("llama-sharded", "llama-sharded");
}
