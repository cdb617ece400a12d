// The architecture table (models/architecture.hpp): which entry a config.json selects, and a toy
// architecture from the test tree, registered as docs/models.md says, going through the same code
// paths as the built-in ones and the commands (init's create + save, run's and train's load, a
// training step, save again).
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "models/architecture.hpp"
#include "remat/ad/tape.hpp"
#include "remat/hf/safetensors.hpp"
#include "tests/models/toy/toy.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/read_text.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

using test::TempDir;
using test::same_bits;

using test::read_text;

const std::string& hf_class_for(const std::string& config) { return models::find_for_config(config, "config.json").hf_class; }

// One step as `remat train` takes it: forward, loss, backward on its own tape, AdamW; the loss and
// every gradient.
std::pair<float, std::vector<Tensor>> train_step(models::Model& model, train::Optimiser& optimiser, const IdTensor& ids) {
    ad::Tape tape;
    ad::UseBackend use(tape);
    Var logits = model.logits({.ids = {{"input_ids", ids}}});
    Var loss = model.loss(logits, ids);
    tape.backward(loss);
    std::vector<Tensor> grads;
    std::vector<const Tensor*> pointers;
    for (Param* p : model.parameters()) {
        const Tensor* g = tape.grad(p->value);
        REQUIRE(g != nullptr);
        grads.push_back(*g);
        pointers.push_back(g);
    }
    optimiser.update(pointers);
    return {loss.value().data()[0], std::move(grads)};
}

}  // namespace

TEST_CASE("the architecture table selects an entry from config.json as HF does") {
    const auto& table = models::architectures();
    REQUIRE(table.size() >= 3);
    CHECK(table[0]->hf_class == "GPT2LMHeadModel");
    CHECK(table[1]->hf_class == "BertForMaskedLM");
    CHECK(table[2]->hf_class == "BertModel");
    CHECK(models::model_types()[0] == "gpt2");
    CHECK(models::model_types()[1] == "bert");

    CHECK(hf_class_for(R"({"model_type": "gpt2"})") == "GPT2LMHeadModel");
    CHECK(hf_class_for(R"({"model_type": "gpt2", "architectures": ["GPT2Model"]})") == "GPT2LMHeadModel");
    CHECK(hf_class_for(R"({"model_type": "bert"})") == "BertForMaskedLM");
    CHECK(hf_class_for(R"({"model_type": "bert", "architectures": ["BertModel"]})") == "BertModel");
    CHECK(hf_class_for(R"({"model_type": "bert", "architectures": ["BertForMaskedLM", "BertModel"]})") == "BertForMaskedLM");
    CHECK(hf_class_for(R"({"architectures": ["GPT2Model"]})") == "GPT2LMHeadModel");
    CHECK(hf_class_for(R"({"architectures": ["Unknown", "BertModel"]})") == "BertModel");
    CHECK_THROWS_WITH_AS(models::find_for_config(R"({"model_type": "mamba"})", "c.json"),
                         "c.json: unsupported model_type \"mamba\" (remat supports gpt2, bert, llama, qwen2 and mistral)",
                         ValueError);
    CHECK_THROWS_WITH_AS(models::find_for_config(R"({"model_type": [1]})", "c.json"),
                         "c.json: model_type must be a string, got an array", ValueError);
    CHECK_THROWS_WITH_AS(models::find_for_config(R"({"architectures": ["Unknown"]})", "c.json"),
                         doctest::Contains("c.json: no model_type and no supported architectures (remat supports "
                                           "model_type gpt2, bert, llama, qwen2 and mistral, or GPT2LMHeadModel, "
                                           "BertForMaskedLM, BertModel, LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM"),
                         ValueError);
    CHECK(models::join({"a"}, "or") == "a");
    CHECK(models::join({"a", "b", "c"}, "or") == "a, b or c");
}

TEST_CASE("a toy architecture registered from the test tree loads, trains, saves and round-trips like a built-in one") {
    toy::register_once();
    const std::string toy_config = R"({"model_type": "toy", "vocab_size": 40, "n_embd": 8, "n_layer": 2})";
    const models::Architecture& arch = models::find_for_config(toy_config, "config.json");
    REQUIRE(arch.hf_class == "ToyLMHeadModel");
    CHECK(&models::find_for_config(R"({"architectures": ["ToyModel"]})", "config.json") == &arch);
    CHECK(models::find_class("ToyModel") == &arch);
    CHECK(models::model_types().back() == "toy");
    CHECK_THROWS_WITH_AS(models::register_architecture(models::Architecture{.hf_class = "ToyLMHeadModel"}),
                         "register_architecture: ToyLMHeadModel is already in the table", ValueError);
    CHECK(arch.default_sizes.n_layer == 3);
    CHECK(arch.objective == models::Objective::causal_lm);

    // What `remat init` does: a config of the requested sizes, a model from a seed, saved.
    CHECK_THROWS_WITH_AS(arch.config_with({.n_embd = 9}), "toy config: n_embd must divide by n_head", ValueError);
    const std::string config = arch.config_with({.n_layer = 2, .n_embd = 8, .n_head = 2, .vocab_size = 40});
    CHECK(config.find("\"dropout\": 0.1,") != std::string::npos);
    CHECK(config.find("\"architectures\": [\n    \"ToyLMHeadModel\"\n  ]") != std::string::npos);
    CHECK(arch.summary(config).sizes.n_positions == 16);
    CHECK_THROWS_WITH_AS(arch.check_config(R"({"model_type": "toy", "vocab_size": 40, "n_embd": 8})", "x/config.json"),
                         "x/config.json: missing field n_layer", ValueError);
    TempDir first, second;
    Generator init(7);
    auto created = arch.create(config, init, std::make_shared<Generator>(3), Policy::none());
    created->save(config, first.path);
    CHECK(created->count_parameters() == 40 * 8 + 16 * 8 + 2 * (8 * 24 + 24 + 8 * 8 + 8) + 40 * 8);

    // What `remat run` and `remat train` do: the folder's entry, the model built and loaded.
    const std::string saved_config = read_text(first.path / "config.json");
    CHECK(&models::find_for_config(saved_config, "config.json") == &arch);
    hf::LoadReport report;
    auto plain = models::load(arch, first.path, Policy::none(), std::make_shared<Generator>(11), &report);
    auto checkpointed = models::load(arch, first.path, Policy::blocks(), std::make_shared<Generator>(11));
    CHECK(report.warnings.empty());
    CHECK(report.loaded == created->named_tensors().size());
    const auto created_params = created->named_parameters(), loaded_params = checkpointed->named_parameters();
    REQUIRE(created_params.size() == loaded_params.size());
    for (std::size_t i = 0; i < created_params.size(); ++i) {
        CAPTURE(created_params[i].first);
        CHECK(created_params[i].first == loaded_params[i].first);
        CHECK(same_bits(created_params[i].second->value, loaded_params[i].second->value));
    }

    // Training steps with dropout: checkpointing every block changes no bit of loss, gradients or weights.
    plain->set_training(true);
    checkpointed->set_training(true);
    auto plain_adamw = plain->adamw({.lr = 1e-2f});
    auto checkpointed_adamw = checkpointed->adamw({.lr = 1e-2f});
    IdTensor ids = IdTensor::from_shape({2, 12});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 7 + 3) % 40);
    float first_loss = 0, last_loss = 0;
    for (int step = 0; step < 3; ++step) {
        const auto [a_loss, a_grads] = train_step(*plain, *plain_adamw, ids);
        const auto [b_loss, b_grads] = train_step(*checkpointed, *checkpointed_adamw, ids);
        CHECK(std::memcmp(&a_loss, &b_loss, sizeof a_loss) == 0);
        for (std::size_t i = 0; i < a_grads.size(); ++i) CHECK(same_bits(a_grads[i], b_grads[i]));
        if (step == 0) first_loss = a_loss;
        last_loss = a_loss;
    }
    CHECK(last_loss < first_loss);

    // Saved again and loaded again: the same bytes, the same bits.
    checkpointed->save(saved_config, second.path);
    TempDir third;
    models::load(arch, second.path, Policy::sqrt())->save(saved_config, third.path);
    CHECK(read_text(second.path / "model.safetensors") == read_text(third.path / "model.safetensors"));
    CHECK(read_text(third.path / "config.json") == saved_config);
    CHECK(read_text(second.path / "model.safetensors") != read_text(first.path / "model.safetensors"));  // it trained

    // Its naming facts: a checkpoint with the base prefix, a tied tensor and a buffer loads, and only
    // the tensor the model does not know is reported.
    {
        const auto file = hf::SafetensorsFile::open(first.path / "model.safetensors");
        std::vector<Tensor> values;
        for (const hf::TensorInfo& t : file.tensors()) values.push_back(file.read_float(t));
        const Tensor extra = zeros(Shape{2});
        std::vector<hf::WriteTensor> prefixed;
        for (std::size_t i = 0; i < values.size(); ++i) prefixed.push_back(hf::f32("toy." + file.tensors()[i].name, values[i]));
        prefixed.push_back(hf::f32("toy.h.0.rotary_cache", extra));
        prefixed.push_back(hf::f32("tied_head.weight", extra));
        prefixed.push_back(hf::f32("toy.unknown", extra));
        TempDir dir;
        hf::write_safetensors(dir.path / "model.safetensors", prefixed, {});
        std::ofstream(dir.path / "config.json") << saved_config;
        hf::LoadReport prefixed_report;
        auto reloaded = models::load(arch, dir.path, Policy::none(), nullptr, &prefixed_report);
        REQUIRE(prefixed_report.warnings.size() == 1);
        CHECK(prefixed_report.warnings[0].find("are not used by the model: \"toy.unknown\"") != std::string::npos);
        const auto a = created->named_parameters(), b = reloaded->named_parameters();
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_bits(a[i].second->value, b[i].second->value));
    }
}
