// A model whose input is not token ids (tests/models/features/: a frame tagger over float features)
// goes where every architecture goes — the table, save and load, set_checkpointing, the planner and
// train::Trainer — with nothing outside its folder and the table knowing it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "models/architecture.hpp"
#include "remat/ad/tape.hpp"
#include "remat/planning/plan.hpp"
#include "remat/train/run_folders.hpp"
#include "remat/train/trainer.hpp"
#include "tests/models/features/features.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

using test::same_bits;
using test::TempDir;

constexpr std::size_t frames_per_example = 8;

// Examples of 8 frames of 6 features drawn from a generator keyed by the example's index; a frame's
// label is the largest of four fixed mixes of its features — something to learn.
class FrameData final : public data::Dataset {
public:
    explicit FrameData(std::uint64_t n) : n_(n) {}
    std::uint64_t size() const override { return n_; }
    std::size_t tokens_per_example() const override { return frames_per_example; }
    std::string name() const override { return "frames"; }
    data::Batch batch(std::span<const std::uint64_t> indices, const data::MaskingKey&) const override {
        const std::size_t B = indices.size(), T = frames_per_example, F = 6;
        Tensor features = Tensor::from_shape({B, T, F});
        IdTensor labels = IdTensor::from_shape({B, T});
        for (std::size_t b = 0; b < B; ++b) {
            Generator(7).fork(indices[b]).fill_normal(features.data() + b * T * F, T * F);
            for (std::size_t t = 0; t < T; ++t) {
                const float* x = features.data() + (b * T + t) * F;
                const float mix[4] = {x[0] + x[1], x[2] - x[0], x[3] + x[4] - x[5], -x[1] - x[3]};
                labels(b, t) = std::max_element(mix, mix + 4) - mix;
            }
        }
        data::Batch out;
        out.values.emplace("features", std::move(features));
        out.ids.emplace("labels", std::move(labels));
        return out;
    }

private:
    std::uint64_t n_;
};

const models::Architecture& tagger() {
    frames::register_once();
    return *models::find_class("FrameTagger");
}

std::string config() {
    return tagger().config_with({.fields = {{"num_features", "6"}, {"hidden_size", "16"}, {"num_layers", "3"},
                                            {"num_labels", "4"}, {"max_frames", "8"}, {"dropout", "0.1"}}});
}

std::unique_ptr<models::Model> create(const Policy& policy, std::shared_ptr<Generator> dropout = nullptr) {
    Generator init(3);
    return tagger().create(config(), init, std::move(dropout), policy);
}

// The loss and every parameter's gradient of one training step on `batch`, dropout keyed to 5.
std::pair<float, std::vector<Tensor>> step(models::Model& model, const data::Batch& batch, Generator& dropout) {
    dropout = Generator(5);
    ad::Tape tape;
    ad::UseBackend use(tape);
    model.set_training(true);
    Var loss = model.training_loss(batch);
    tape.backward(loss);
    std::vector<Tensor> grads;
    for (Param* p : model.parameters()) grads.push_back(*tape.grad(p->value));
    return {loss.item(), std::move(grads)};
}

void check_same(const std::pair<float, std::vector<Tensor>>& a, const std::pair<float, std::vector<Tensor>>& b) {
    CHECK(same_bits(a.first, b.first));
    REQUIRE(a.second.size() == b.second.size());
    for (std::size_t i = 0; i < a.second.size(); ++i) CHECK(same_bits(a.second[i], b.second[i]));
}

}  // namespace

TEST_CASE("a model of float features is saved and loaded through the table, its logits bit for bit") {
    const TempDir dir;
    auto model = create(Policy::none());
    const FrameData data(4);
    const data::Batch batch = data.batch(std::vector<std::uint64_t>{0, 1, 2}, {});
    model->set_training(false);
    const Tensor before = model->logits(batch).value();
    CHECK(before.shape() == Shape{3, frames_per_example, 4});
    model->save(config(), dir.path);

    auto loaded = models::load(models::find_for_config(config(), "config.json"), dir.path, Policy::blocks());
    loaded->set_training(false);
    CHECK(same_bits(loaded->logits(batch).value(), before));
    // Token ids are not its input: the error names what it reads.
    CHECK_THROWS_WITH_AS(model->logits({.ids = {{"input_ids", IdTensor::from_shape({1, 8})}}}),
                         "the batch has no \"features\"", ValueError);
}

TEST_CASE("a float-feature model checkpointed or planned gives the plain model's gradients, bit for bit") {
    const FrameData data(4);
    const data::Batch batch = data.batch(std::vector<std::uint64_t>{3, 1}, {});
    auto dropout = std::make_shared<Generator>(0);
    auto plain = create(Policy::none(), dropout);
    const auto expected = step(*plain, batch, *dropout);
    for (const Policy& policy : {Policy::blocks(), Policy::every(2), Policy::sqrt()}) {
        CAPTURE(policy.to_string());
        auto checkpointed = create(policy, dropout);
        check_same(step(*checkpointed, batch, *dropout), expected);
    }

    // The planner profiles its step and picks a plan under the budget; the gradients stay the same.
    auto planned = create(Policy::none(), dropout);
    planned->set_training(true);
    ad::Tape tape;
    ad::UseBackend use(tape);
    const planning::Profile profile = planned->profile_checkpointing([&] {
        *dropout = Generator(5);
        return planned->training_loss(batch);
    });
    CHECK(profile.blocks.size() == 3);
    const auto plan = planning::plan_checkpointing(profile, planning::smallest_budget(profile));
    REQUIRE(plan);
    planned->set_policy(*plan);
    check_same(step(*planned, batch, *dropout), expected);
}

TEST_CASE("train::Trainer trains a float-feature model, and a run stopped and resumed is the whole run, bit for bit") {
    const TempDir dir;
    const FrameData data(48), valid(16);
    // A run into `out` (going on from its latest checkpoint if any), stopping before step `stop_at`.
    auto run = [&](const fs::path& out, std::int64_t stop_at) {
        auto dropout = std::make_shared<Generator>(0);
        const auto latest = train::latest_run_folder(out);
        auto model = latest ? models::load(tagger(), *latest, Policy::blocks(), dropout) : create(Policy::blocks(), dropout);
        train::Trainer trainer(*model, data,
                               {.steps = 12, .batch = 4, .accumulate = 2, .adamw = {.lr = 1e-2f, .weight_decay = 0.01f},
                                .seed = 11, .dropout = dropout, .valid = &valid, .validate_every = 4,
                                .save = out, .save_every = 4,
                                .save_model = [&](const fs::path& folder) { model->save(config(), folder); },
                                .stop_requested = [&] { return trainer.state().step == stop_at ? 15 : 0; }});
        if (latest) trainer.resume(*latest);
        const train::RunSummary summary = trainer.run();
        std::vector<Tensor> weights;
        for (Param* p : model->parameters()) weights.push_back(p->value);
        return std::pair(summary, weights);
    };
    const auto [whole, whole_weights] = run(dir.path / "whole", -1);
    CHECK(whole.last_step == 12);
    CHECK(whole.tokens == 12 * 4 * 2 * frames_per_example);
    CHECK(whole.last_loss < 0.8f * whole.first_loss);  // it learns
    REQUIRE(whole.valid_loss);

    const auto [first, first_weights] = run(dir.path / "parts", 6);
    CHECK(first.stopped_by == 15);
    REQUIRE(first.saved);
    CHECK(first.saved->filename() == "checkpoint-6");
    const auto [rest, rest_weights] = run(dir.path / "parts", -1);
    CHECK(rest.first_step == 6);
    CHECK(same_bits(rest.last_loss, whole.last_loss));
    CHECK(*rest.valid_loss == *whole.valid_loss);
    for (std::size_t i = 0; i < whole_weights.size(); ++i) CHECK(same_bits(rest_weights[i], whole_weights[i]));
}
