// Supervised examples packed into rows: the rows' layout (best-fit decreasing, positions restarting,
// the first label of each dropped, padding at the end) and the promise that packing changes the speed,
// not the loss — a packed batch's loss and gradients are the padded batch's, within float rounding,
// on GPT-2 and Llama; checkpointed blocks give the packed batch's bits.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "remat/ad/tape.hpp"
#include "remat/data/packing.hpp"
#include "tests/support/supervised_example.hpp"
#include "tests/support/table_model.hpp"

using namespace remat;

namespace {

data::SupervisedExamples packing_examples() {
    data::SupervisedExamples ex;
    ex.examples = {test::supervised_example({5, 9, 14, 3, 27}, 2), test::supervised_example({8, 1, 1, 40, 33, 12, 6, 19, 2}, 4),
                   test::supervised_example({30, 31, 32}, 0),  // every label kept: the first one is what packing drops
                   test::supervised_example({7, 7, 41, 42, 43, 44, 45}, 1), test::supervised_example({11, 12}, 0)};
    return ex;
}

struct LossAndGradients {
    double loss;
    std::vector<Tensor> gradients;
};

LossAndGradients loss_and_gradients(models::Model& model, const data::Batch& batch) {
    ad::Tape& tape = ad::default_tape();
    tape.zero_grad();
    const Var loss = model.training_loss(batch);
    tape.backward(loss);
    LossAndGradients out{loss.value().data()[0], {}};
    for (Param* p : model.parameters()) out.gradients.push_back(*tape.grad(p->value));
    tape.zero_grad();
    return out;
}

double worst_gap(const Tensor& a, const Tensor& b) {
    double worst = 0, scale = 1e-6;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(a.data()[i]) - b.data()[i]));
        scale = std::max(scale, std::abs(static_cast<double>(b.data()[i])));
    }
    return worst / scale;
}

}  // namespace

TEST_CASE("packed examples: best-fit decreasing, positions restart, the first label dropped") {
    const data::PackedExamples rows(packing_examples(), 12, 0, "examples");
    // Lengths 5 9 3 7 2, longest first into the fullest row that holds it: [9 3] [7 5] [2].
    REQUIRE(rows.size() == 3);
    CHECK(rows.examples() == 5);
    CHECK(rows.padding() == 3 * 12 - 26);
    CHECK(rows.tokens_per_example() == 9);  // 26 tokens over 3 rows, rounded up

    const std::vector<std::uint64_t> first{0};
    const data::Batch b = rows.batch(first, {});
    const IdTensor &ids = b.id("input_ids"), &labels = b.id("labels"), &positions = b.id("position_ids");
    REQUIRE(ids.shape()[1] == 12);
    CHECK(b.find_id("attention_mask") == nullptr);  // nothing attends to the padding: no mask needed
    const std::int64_t want_ids[] = {8, 1, 1, 40, 33, 12, 6, 19, 2, 30, 31, 32};
    const std::int64_t want_positions[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2};
    const std::int64_t want_labels[] = {-100, -100, -100, -100, 33, 12, 6, 19, 2, -100, 31, 32};
    for (std::size_t t = 0; t < 12; ++t) {
        CAPTURE(t);
        CHECK(ids(0, t) == want_ids[t]);
        CHECK(positions(0, t) == want_positions[t]);
        CHECK(labels(0, t) == want_labels[t]);
    }
    const std::vector<std::uint64_t> second{1};
    CHECK(rows.batch(second, {}).id("input_ids")(0, 7) == 5);  // the 5-token example after the 7-token one
    const std::vector<std::uint64_t> last{2};
    const data::Batch padded = rows.batch(last, {});
    CHECK(padded.id("input_ids")(0, 2) == 0);  // padding: pad id, unlabelled, positions from 0 again
    CHECK(padded.id("labels")(0, 11) == data::ignore_label);
    CHECK(padded.id("position_ids")(0, 2) == 0);
    CHECK(padded.id("position_ids")(0, 11) == 9);

    CHECK_THROWS_WITH_AS(data::PackedExamples(packing_examples(), 8, 0, "long"),
                         "long: example 1 has 9 tokens, more than a packed row of 8", ValueError);
    CHECK_THROWS_AS(data::PackedExamples({}, 8, 0, "none"), ValueError);
    const std::vector<std::uint64_t> past{3};
    CHECK_THROWS_WITH_AS(rows.batch(past, {}), "examples: row 3 of 3", ValueError);
}

TEST_CASE("packing changes the speed, not the loss: packed = padded loss and gradients, GPT-2 and Llama") {
    const data::SupervisedBatches padded(packing_examples(), 0, "padded");
    const data::PackedExamples packed(packing_examples(), 12, 0, "packed");
    const std::vector<std::uint64_t> all_examples{0, 1, 2, 3, 4}, all_rows{0, 1, 2};
    for (const char* hf_class : {"GPT2LMHeadModel", "LlamaForCausalLM"}) {
        CAPTURE(hf_class);
        const models::SizeRequest sizes{.n_layer = 2, .n_embd = 16, .n_head = 4, .vocab_size = 50, .n_positions = 16};
        auto model = test::table_model(hf_class, sizes, 3);
        model->set_training(false);
        const LossAndGradients want = loss_and_gradients(*model, padded.batch(all_examples, {}));
        const LossAndGradients got = loss_and_gradients(*model, packed.batch(all_rows, {}));
        CHECK(got.loss == doctest::Approx(want.loss).epsilon(1e-6));
        for (std::size_t i = 0; i < want.gradients.size(); ++i) {
            CAPTURE(i);
            CHECK(worst_gap(got.gradients[i], want.gradients[i]) < 1e-5);
        }
        // The sequences' starts reach checkpointed blocks' recomputation: the same bits as without.
        auto checkpointed = test::table_model(hf_class, sizes, 3, Policy::blocks());
        checkpointed->set_training(false);
        const LossAndGradients again = loss_and_gradients(*checkpointed, packed.batch(all_rows, {}));
        CHECK(std::memcmp(&again.loss, &got.loss, sizeof got.loss) == 0);
        for (std::size_t i = 0; i < got.gradients.size(); ++i)
            CHECK(std::memcmp(again.gradients[i].data(), got.gradients[i].data(), got.gradients[i].size() * sizeof(float)) == 0);
    }
}
