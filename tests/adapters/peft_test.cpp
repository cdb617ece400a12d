// LoRA adapters in HF PEFT's format (remat/adapters/peft.hpp): PEFT's key names and config fields, a
// round trip that reproduces the adapted model bit for bit, and the adapters remat refuses to run.
#include <doctest/doctest.h>

#include <fstream>

#include "remat/adapters/peft.hpp"
#include "remat/hf/load.hpp"
#include "remat/hf/safetensors.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/table_model.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

const models::SizeRequest small_gpt2{.n_layer = 2, .n_embd = 16, .n_head = 4, .vocab_size = 40, .n_positions = 12};

// A GPT-2 with adapters on c_attn and c_fc whose B is not zero (as after training).
std::unique_ptr<models::Model> adapted_gpt2(const adapters::LoraConfig& config) {
    auto model = test::table_model("GPT2LMHeadModel", small_gpt2, 1);
    Generator init(2);
    model->set_lora(config, init);
    model->set_training(false);  // after set_lora: its dropouts are new layers, in automatic mode
    test::randomise_lora_B(*model, 10, 0.2f);
    return model;
}

IdTensor some_ids() {
    IdTensor ids = IdTensor::from_shape({2, 8});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 11 + 1) % 40);
    return ids;
}

// dir/adapter_config.json with `field` set to the JSON text `value` (or removed when value is empty).
void edit_config(const fs::path& dir, const std::string& field, const std::string& value) {
    std::string text = test::read_text(dir / "adapter_config.json");
    const std::size_t at = text.find("\"" + field + "\": ");
    REQUIRE(at != std::string::npos);
    const std::size_t begin = at + field.size() + 4;
    std::size_t end = begin, depth = 0;
    for (; end < text.size(); ++end) {
        const char c = text[end];
        if (c == '[' || c == '{') ++depth;
        if (c == ']' || c == '}') {
            if (depth == 0) break;
            --depth;
        }
        if (c == ',' && depth == 0) break;
    }
    text.replace(begin, end - begin, value);
    std::ofstream(dir / "adapter_config.json", std::ios::binary) << text;
}

}  // namespace

TEST_CASE("PEFT format: the keys and config PEFT writes, and back to the same model bit for bit") {
    const test::TempDir tmp("remat-peft");
    const adapters::LoraConfig config{.r = 4, .alpha = 32, .dropout = 0.05f, .target_modules = {"c_attn", "c_fc"}};
    auto model = adapted_gpt2(config);
    adapters::save_peft(model->named_parameters(), config, {.base_model_name_or_path = "gpt2", .fan_in_fan_out = true},
                        tmp.path);

    const auto file = hf::SafetensorsFile::open(tmp.path / "adapter_model.safetensors");
    std::vector<std::string> names;
    for (const hf::TensorInfo& t : file.tensors()) names.push_back(t.name);
    std::sort(names.begin(), names.end());
    REQUIRE(names.size() == 8);
    CHECK(names[0] == "base_model.model.transformer.h.0.attn.c_attn.lora_A.weight");
    CHECK(names[1] == "base_model.model.transformer.h.0.attn.c_attn.lora_B.weight");
    CHECK(names[2] == "base_model.model.transformer.h.0.mlp.c_fc.lora_A.weight");
    CHECK(file.find(names[1])->shape == std::vector<std::size_t>{48, 4});
    CHECK(file.find(names[1])->dtype == hf::DType::F32);

    CHECK(test::read_text(tmp.path / "adapter_config.json") == R"({
  "alpha_pattern": {},
  "auto_mapping": null,
  "base_model_name_or_path": "gpt2",
  "bias": "none",
  "fan_in_fan_out": true,
  "inference_mode": true,
  "init_lora_weights": true,
  "layer_replication": null,
  "layers_pattern": null,
  "layers_to_transform": null,
  "loftq_config": {},
  "lora_alpha": 32,
  "lora_dropout": 0.05,
  "megatron_config": null,
  "megatron_core": "megatron.core",
  "modules_to_save": null,
  "peft_type": "LORA",
  "r": 4,
  "rank_pattern": {},
  "revision": null,
  "target_modules": [
    "c_attn",
    "c_fc"
  ],
  "task_type": "CAUSAL_LM",
  "use_dora": false,
  "use_rslora": false
})");

    const adapters::PeftAdapter read = adapters::read_peft_config(tmp.path);
    CHECK(read.config.r == 4);
    CHECK(read.config.alpha == 32);
    CHECK(read.config.dropout == 0.05f);
    CHECK(read.config.target_modules == std::vector<std::string>{"c_attn", "c_fc"});
    CHECK(read.info.base_model_name_or_path == "gpt2");
    CHECK(read.info.fan_in_fan_out);

    auto again = test::table_model("GPT2LMHeadModel", small_gpt2, 1);
    Generator other(99);  // A is overwritten by the file
    again->set_lora(read.config, other);
    again->set_training(false);
    CHECK(adapters::load_peft(again->named_parameters(), tmp.path) == 8);
    CHECK(test::same_bits(test::logits_of(*again, some_ids()).value(), test::logits_of(*model, some_ids()).value()));
}

TEST_CASE("PEFT format: \"all-linear\" is written and read as PEFT's string, not a regular expression") {
    const test::TempDir tmp("remat-peft-all-linear");
    const adapters::LoraConfig config{.r = 2, .alpha = 4, .target_modules = {"all-linear"}};
    auto model = adapted_gpt2(config);
    adapters::save_peft(model->named_parameters(), config, {.fan_in_fan_out = true}, tmp.path);
    CHECK(test::read_text(tmp.path / "adapter_config.json").find(R"("target_modules": "all-linear",)") != std::string::npos);
    const adapters::PeftAdapter read = adapters::read_peft_config(tmp.path);
    CHECK(read.config.target_modules == std::vector<std::string>{"all-linear"});
    CHECK(read.config.target_regex.empty());
}

TEST_CASE("PEFT format: adapters remat does not run, and an adapter for another model, are refused by name") {
    const test::TempDir tmp("remat-peft");
    const adapters::LoraConfig config{.r = 4, .alpha = 8, .target_modules = {"c_attn"}};
    auto model = adapted_gpt2(config);
    const std::string config_path = (tmp.path / "adapter_config.json").string();
    auto refused = [&](const std::string& field, const std::string& value, const std::string& message) {
        CAPTURE(field);
        adapters::save_peft(model->named_parameters(), config, {}, tmp.path);
        edit_config(tmp.path, field, value);
        CHECK_THROWS_WITH(adapters::read_peft_config(tmp.path), (config_path + ": " + message).c_str());
    };
    refused("use_dora", "true", "DoRA (use_dora true): remat runs plain LoRA adapters only");
    refused("bias", "\"all\"", "bias \"all\" (trained biases): remat runs plain LoRA adapters only");
    refused("modules_to_save", "[\"lm_head\"]",
            "fully trained modules beside the adapters (modules_to_save [\"lm_head\"]): remat runs plain LoRA adapters only");
    refused("rank_pattern", "{\"c_attn\": 8}", "ranks by module (rank_pattern {\"c_attn\":8}): remat runs plain LoRA adapters only");
    refused("peft_type", "\"IA3\"", "a \"IA3\" adapter: remat loads LoRA adapters (peft_type \"LORA\")");
    refused("r", "0", "r must be a positive integer, got 0");
    refused("target_modules", "7", "target_modules must be a list of module names or one regular expression, got 7");

    SUBCASE("an adapter for other targets or another rank: every problem listed") {
        adapters::save_peft(model->named_parameters(), config, {}, tmp.path);
        auto wider = test::table_model("GPT2LMHeadModel", small_gpt2, 1);
        Generator init(3);
        wider->set_lora({.r = 2, .alpha = 8, .target_modules = {"c_attn", "c_fc"}}, init);
        const std::string path = (tmp.path / "adapter_model.safetensors").string();
        CHECK_THROWS_WITH_AS(adapters::load_peft(wider->named_parameters(), tmp.path),
                             (path + ": 8 problems (an adapter for another base model, or other target modules?):\n"
                                     "  base_model.model.transformer.h.0.attn.c_attn.lora_A.weight: (4, 16) in the file, (2, 16) in the model\n"
                                     "  base_model.model.transformer.h.0.attn.c_attn.lora_B.weight: (48, 4) in the file, (48, 2) in the model\n"
                                     "  missing base_model.model.transformer.h.0.mlp.c_fc.lora_A.weight\n"
                                     "  missing base_model.model.transformer.h.0.mlp.c_fc.lora_B.weight\n"
                                     "  base_model.model.transformer.h.1.attn.c_attn.lora_A.weight: (4, 16) in the file, (2, 16) in the model\n"
                                     "  base_model.model.transformer.h.1.attn.c_attn.lora_B.weight: (48, 4) in the file, (48, 2) in the model\n"
                                     "  missing base_model.model.transformer.h.1.mlp.c_fc.lora_A.weight\n"
                                     "  missing base_model.model.transformer.h.1.mlp.c_fc.lora_B.weight")
                                 .c_str(),
                             hf::LoadError);
        auto plain = test::table_model("GPT2LMHeadModel", small_gpt2, 1);
        CHECK_THROWS_WITH_AS(adapters::save_peft(plain->named_parameters(), config, {}, tmp.path),
                             "save_peft: the model has no LoRA adapter to save", ValueError);
    }
}
