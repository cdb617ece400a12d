#include <doctest/doctest.h>

#include "models/bert/architecture.hpp"
#include "models/gpt2/architecture.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/support/fixture_with_field.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;

TEST_CASE("a model kept with its config") {
    const std::filesystem::path fixture = std::filesystem::path(REMAT_FIXTURES) / "gpt2-tiny";
    auto gpt = models::from_pretrained_with_config<gpt2::LMHead>(fixture);
    CHECK(gpt.config.n_layer == 2);
    CHECK(gpt.config.vocab_size == 64);
    CHECK(gpt.model.transformer.h.size() == gpt.config.n_layer);

    SUBCASE("save_pretrained writes both; they load back as they were") {
        test::TempDir dir;
        models::save_pretrained(gpt, dir.path);
        auto again = models::from_pretrained_with_config<gpt2::LMHead>(dir.path);
        CHECK(again.config.to_json() == gpt.config.to_json());
        auto a = tree::parameters(gpt.model), b = tree::parameters(again.model);
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(test::same_bits(a[i]->value, b[i]->value));
    }
    SUBCASE("create_with_config") {
        gpt2::Config c = gpt.config;
        c.n_layer = 1;
        Generator init(0);
        auto fresh = models::create_with_config<gpt2::LMHead>(c, init);
        CHECK(fresh.model.transformer.h.size() == 1);
        CHECK(fresh.config.n_layer == 1);
    }
}

TEST_CASE("the typed from_pretrained refuses a config its checkpoint cannot fill, before building it") {
    // As models::load does (tests/models/hostile_sizes_test.cpp): bounded by the checkpoint's size.
    const test::TempDir tmp("remat-sizes");
    const auto layers = test::fixture_with_field(tmp, "gpt2-tiny", "n_layer", "100000");
    CHECK_THROWS_WITH_AS(gpt2::from_pretrained(layers), doctest::Contains("describes a model larger than"), ValueError);
    const auto wide = test::fixture_with_field(tmp, "bert-tiny", "intermediate_size", "16000000");  // 4 · 16M floats per layer
    CHECK_THROWS_WITH_AS(models::from_pretrained<bert::MaskedLM>(wide), doctest::Contains("check num_hidden_layers 2, hidden_size"),
                         ValueError);
}
