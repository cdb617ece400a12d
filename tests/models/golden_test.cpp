// GPT-2 and BERT against independent float64 PyTorch references (tests/fixtures/make_model_fixtures.py):
// logits, loss and every parameter gradient, llm.c style, with the largest differences reported.
#include <doctest/doctest.h>

#include <cmath>

#include "models/bert/pretrained.hpp"
#include "models/gpt2/pretrained.hpp"
#include "remat/layers/modes.hpp"
#include "remat/train/gradient.hpp"
#include "tests/support/compare_reference.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;

namespace {
using test::fixtures;
using test::compare_gradients;
using test::relative_difference;
}  // namespace

TEST_CASE("GPT-2 matches the PyTorch reference") {
    hf::LoadReport report;
    auto model = gpt2::from_pretrained(fixtures / "gpt2-tiny", &report);
    CHECK(report.warnings.empty());  // attn.bias buffers are known, not warned about
    nn::testmode(model);             // dropout off, as the reference
    const auto reference = hf::SafetensorsFile::open(fixtures / "gpt2-tiny-reference.safetensors");
    const IdTensor ids = reference.read_int(*reference.find("input_ids"));
    const IdTensor labels = reference.read_int(*reference.find("labels"));
    Tensor logits;
    auto [loss, grads] = train::withgradient([&](auto& m) {
        Var y = m(ids);
        logits = y.value();
        return m.loss(y, labels);
    }, model);
    const double logit_difference = relative_difference(logits, reference.read_float(*reference.find("logits")));
    MESSAGE("GPT-2 logits: largest difference " << logit_difference << " of the largest logit; loss " << loss);
    CHECK(logit_difference < 1e-5);
    CHECK(loss == doctest::Approx(reference.read_float(*reference.find("loss"))()).epsilon(1e-5));
    compare_gradients(grads, reference, 2 + 2 * 12 + 2);
    {
        ad::NoGrad no_grad;
        const float lm_loss = model.loss(model(ids), ids).value()();
        CHECK(lm_loss == doctest::Approx(reference.read_float(*reference.find("logits_no_labels_loss"))()).epsilon(1e-5));
    }
}

TEST_CASE("BERT matches the PyTorch reference") {
    hf::LoadReport report;
    auto model = bert::from_pretrained(fixtures / "bert-tiny", &report);
    REQUIRE(report.warnings.size() == 1);  // as HF: the pooler and next-sentence head are not used
    CHECK(report.warnings[0].find("4 tensors in") == 0);
    CHECK(report.warnings[0].find("bert.pooler.dense.weight") != std::string::npos);
    CHECK(report.warnings[0].find("cls.seq_relationship.bias") != std::string::npos);
    nn::testmode(model);
    const auto reference = hf::SafetensorsFile::open(fixtures / "bert-tiny-reference.safetensors");
    auto read_ids = [&](const char* name) { return reference.read_int(*reference.find(name)); };
    const bert::Inputs in{read_ids("input_ids"), read_ids("token_type_ids"), read_ids("attention_mask")};
    const IdTensor labels = read_ids("labels");
    Tensor logits;
    auto [loss, grads] = train::withgradient([&](auto& m) {
        Var y = m(in);
        logits = y.value();
        return m.loss(y, labels);
    }, model);
    const double logit_difference = relative_difference(logits, reference.read_float(*reference.find("logits")));
    MESSAGE("BERT logits: largest difference " << logit_difference << " of the largest logit; loss " << loss);
    CHECK(logit_difference < 1e-5);
    CHECK(loss == doctest::Approx(reference.read_float(*reference.find("loss"))()).epsilon(1e-5));
    compare_gradients(grads, reference, 5 + 2 * 16 + 5);
}
