// HF Trainer's weight-decay rule (get_decay_parameter_names) on GPT-2: which parameters decay, and
// the update leaving the others undecayed.
#include <doctest/doctest.h>

#include "models/gpt2/gpt2.hpp"
#include "remat/train/optimisers.hpp"
#include "remat/train/weight_decay.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/tiny_gpt2.hpp"

using namespace remat;

TEST_CASE("weight_decay_mask: HF Trainer's rule — biases and LayerNorm weights do not decay") {
    Generator init(3);
    auto model = gpt2::create(test::tiny_gpt2(1, 0.0), init);
    const auto mask = train::weight_decay_mask(model);
    const auto named = tree::named_parameters(model);
    REQUIRE(mask.size() == named.size());
    std::vector<std::string> decaying;
    for (std::size_t i = 0; i < named.size(); ++i)
        if (mask[i]) decaying.push_back(named[i].first);
    CHECK(decaying == std::vector<std::string>{"transformer.wte.weight", "transformer.wpe.weight",
                                               "transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_proj.weight",
                                               "transformer.h.0.mlp.c_fc.weight", "transformer.h.0.mlp.c_proj.weight"});

    SUBCASE("update leaves the others undecayed") {
        auto state = train::setup(train::AdamW{.lr = 0.1f, .weight_decay = 0.5f}, model);
        state.decays = mask;
        std::vector<Tensor> zero;
        std::vector<const Tensor*> grads;
        for (auto& [name, p] : named) zero.push_back(zeros(p->shape()));
        for (const Tensor& z : zero) grads.push_back(&z);
        const Tensor ln = model.transformer.ln_f.weight.value, wte = model.transformer.wte.weight.value;
        train::update(state, model, std::span<const Tensor* const>(grads));
        CHECK(test::same_bits(model.transformer.ln_f.weight.value, ln));  // zero gradient, no decay
        CHECK(model.transformer.wte.weight.value(0, 0) == wte(0, 0) * (1 - 0.1f * 0.5f));
        state.decays.pop_back();
        CHECK_THROWS_WITH_AS(train::update(state, model, std::span<const Tensor* const>(grads)),
                             doctest::Contains("a weight decay mask of"), ValueError);
    }
}
