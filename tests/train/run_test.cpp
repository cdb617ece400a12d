// The pieces of a training run: micro-batch gradients, HF's weight-decay rule, the run state and its
// folders.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <xtensor/xview.hpp>

#include "remat/checkpoint.hpp"
#include "remat/train/micro_batches.hpp"
#include "remat/train/optimisers.hpp"
#include "remat/train/run_folders.hpp"
#include "remat/train/run_state.hpp"
#include "tests/support/table_model.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;

namespace {

IdTensor window_batch(std::size_t first, std::size_t b, std::size_t t) {
    IdTensor ids = IdTensor::from_shape({b, t});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((first * 7 + i * 13) % 50);
    return ids;
}

// A GPT-2 of `layers` blocks (50 ids, 12 positions, width 16), dropout p ("0.1", "0.0") drawing from rng.
std::unique_ptr<models::Model> gpt2_of_depth(std::size_t layers, const char* p, std::shared_ptr<Generator> rng = nullptr,
                                    const Policy& policy = Policy::none()) {
    return test::table_model("GPT2LMHeadModel",
                             {.n_layer = layers, .n_embd = 16, .n_head = 4, .vocab_size = 50, .n_positions = 12,
                              .fields = {{"resid_pdrop", p}, {"embd_pdrop", p}, {"attn_pdrop", p}}},
                             1, policy, std::move(rng));
}

// Each parameter's gradient copied out of `tape` after backward of `loss`, on zeroed buffers.
std::vector<Tensor> gradients(ad::Tape& tape, const std::vector<Param*>& params, const std::function<Var()>& loss) {
    ad::UseBackend use(tape);
    tape.zero_grad();
    tape.backward(loss());
    std::vector<Tensor> out;
    for (Param* p : params) out.push_back(*tape.grad(p->value));
    return out;
}

}  // namespace

TEST_CASE("MicroBatches: K = 1 is the plain step; K > 1 is G_0 + … + G_{K-1} of loss_j / K, to the bit") {
    auto rng = std::make_shared<Generator>(9);
    auto model = gpt2_of_depth(2, "0.1", rng);  // dropout on
    auto params = model->parameters();
    ad::Tape tape;
    train::MicroBatches micro(params);
    const IdTensor a = window_batch(0, 2, 8), b = window_batch(1, 2, 8);

    SUBCASE("K = 1") {
        rng->seed(4);
        const auto plain = gradients(tape, params, [&] { return test::loss_of(*model, a, a); });
        rng->seed(4);
        const auto g = micro.run(tape, 1, [&](std::size_t) { return test::loss_of(*model, a, a); });
        for (std::size_t i = 0; i < params.size(); ++i) CHECK(test::same_bits(*g.grads[i], plain[i]));
    }
    SUBCASE("K = 3, against the definition computed by hand") {
        const IdTensor batches[] = {a, b, window_batch(2, 2, 8)};
        std::vector<std::vector<Tensor>> parts;
        for (std::size_t j = 0; j < 3; ++j) {
            rng->seed(100 + j);
            parts.push_back(gradients(tape, params, [&] { return test::loss_of(*model, batches[j], batches[j]) * (1.0f / 3); }));
        }
        const auto g = micro.run(tape, 3, [&](std::size_t j) {
            rng->seed(100 + j);  // the caller keys dropout by micro-batch
            return test::loss_of(*model, batches[j], batches[j]);
        });
        for (std::size_t i = 0; i < params.size(); ++i) {
            Tensor expected = zeros(parts[0][i].shape());  // +0 + G_0 + …: a −0 in G_0 becomes +0
            expected += parts[0][i];
            expected += parts[1][i];
            expected += parts[2][i];
            CHECK(test::same_bits(*g.grads[i], expected));
        }
        // Run again: the sum buffers are reused, not added to.
        const auto again = micro.run(tape, 3, [&](std::size_t j) {
            rng->seed(100 + j);
            return test::loss_of(*model, batches[j], batches[j]);
        });
        for (std::size_t i = 0; i < params.size(); ++i) CHECK(test::same_bits(*again.grads[i], *g.grads[i]));
    }
}

TEST_CASE("MicroBatches with a GradientWatch: each step gradient reported once, already final, during backward") {
    const IdTensor batches[] = {window_batch(0, 2, 8), window_batch(1, 2, 8), window_batch(2, 2, 8)};
    auto check = [&](std::unique_ptr<models::Model> model, const char* policy, const std::shared_ptr<Generator>& rng) {
        CAPTURE(policy);
        auto params = model->parameters();
        params[1]->frozen = true;  // a frozen parameter is never reported
        ad::Tape tape;
        train::MicroBatches micro(params);
        for (std::size_t k : {std::size_t{1}, std::size_t{3}}) {
            CAPTURE(k);
            auto loss = [&](std::size_t j) {
                rng->seed(100 + j);
                return test::loss_of(*model, batches[j], batches[j]);
            };
            std::vector<Tensor> expected;
            for (Tensor* g : micro.run(tape, k, loss).grads) expected.push_back(g ? *g : Tensor());

            std::vector<std::optional<Tensor>> seen(params.size());
            std::vector<std::size_t> at(params.size(), 0), times(params.size(), 0);
            std::size_t ops_done = 0;
            std::vector<std::optional<Tensor>> seen_early(params.size());
            std::vector<std::vector<std::int64_t>> rows_left(params.size());
            std::vector<std::size_t> times_early(params.size(), 0);
            const train::GradientWatch watch{.final = [&](std::size_t i, Tensor* g) {
                                                 ++times[i];
                                                 at[i] = ops_done;
                                                 seen[i] = g ? std::optional(*g) : std::nullopt;
                                             },
                                             .final_except_rows = [&](std::size_t i, Tensor* g, std::span<const std::int64_t> rows) {
                                                 ++times_early[i];
                                                 CHECK(times[i] == 0);
                                                 seen_early[i] = g ? std::optional(*g) : std::nullopt;
                                                 rows_left[i].assign(rows.begin(), rows.end());
                                             },
                                             .progress = [&] { ++ops_done; }};
            const auto g = micro.run(tape, k, loss, 0, &watch);
            std::size_t early = 0;
            for (std::size_t i = 0; i < params.size(); ++i) {
                CAPTURE(i);
                if (params[i]->frozen) {
                    CHECK(times[i] == 0);
                    CHECK(g.grads[i] == nullptr);
                    continue;
                }
                CHECK(times[i] == 1);
                REQUIRE(seen[i]);
                REQUIRE(g.grads[i]);
                CHECK(test::same_bits(*seen[i], *g.grads[i]));  // final when reported
                CHECK(test::same_bits(*g.grads[i], expected[i]));  // and the same gradient as unwatched
                early += at[i] * 2 < ops_done;
            }
            // The tied token embedding (wte, parameter 0) and the position table (wpe, 1, frozen here)
            // have only lookups left at the end: with one micro-batch, wte is reported early first,
            // every row but the batch's tokens final then.
            CHECK(times_early[0] == (k == 1 ? 1 : 0));
            for (std::size_t i = 1; i < params.size(); ++i) CHECK(times_early[i] == 0);
            if (k == 1) {
                std::vector<std::int64_t> tokens(batches[0].begin(), batches[0].end());
                std::sort(tokens.begin(), tokens.end());
                tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
                CHECK(rows_left[0] == tokens);
                REQUIRE(seen_early[0]);
                const std::size_t C = seen_early[0]->shape()[1];
                std::size_t rows_final = 0;
                for (std::size_t r = 0; r < seen_early[0]->shape()[0]; ++r) {
                    if (std::binary_search(tokens.begin(), tokens.end(), static_cast<std::int64_t>(r))) continue;
                    rows_final += std::equal(seen_early[0]->data() + r * C, seen_early[0]->data() + (r + 1) * C,
                                             g.grads[0]->data() + r * C, [](float a, float b) {
                                                 return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
                                             });
                }
                CHECK(rows_final == seen_early[0]->shape()[0] - tokens.size());
            }
            MESSAGE(early << " of " << params.size() << " reported in the first half of the last backward");
            CHECK(early * 3 > params.size());  // the later blocks' parameters, in the first half of backward
        }
    };
    auto rng = std::make_shared<Generator>(9);
    check(gpt2_of_depth(3, "0.1", rng), "none", rng);
    check(gpt2_of_depth(3, "0.1", rng, Policy::blocks()), "blocks", rng);
    check(gpt2_of_depth(3, "0.1", rng, Policy::parse("selective")), "selective", rng);
}

TEST_CASE("MicroBatches: K micro-batches of B windows against one batch of B·K, dropout off: float rounding") {
    auto model = gpt2_of_depth(2, "0.0");
    auto params = model->parameters();
    ad::Tape tape;
    train::MicroBatches micro(params);
    const IdTensor whole = window_batch(0, 4, 8);
    const IdTensor halves[] = {xt::view(whole, xt::range(0, 2), xt::all()), xt::view(whole, xt::range(2, 4), xt::all())};
    const auto one = micro.run(tape, 1, [&](std::size_t) { return test::loss_of(*model, whole, whole); });
    std::vector<Tensor> big;
    for (Tensor* g : one.grads) big.push_back(*g);
    const float big_loss = one.loss;
    const auto two = micro.run(tape, 2, [&](std::size_t j) { return test::loss_of(*model, halves[j], halves[j]); });
    double worst = 0;  // per parameter: largest |difference| over its largest |gradient|
    for (std::size_t i = 0; i < params.size(); ++i) {
        double diff = 0, scale = 0;
        for (std::size_t e = 0; e < big[i].size(); ++e) {
            const double x = big[i].data()[e], y = two.grads[i]->data()[e];
            diff = std::max(diff, std::abs(x - y));
            scale = std::max(scale, std::abs(x));
        }
        worst = std::max(worst, diff / scale);
    }
    MESSAGE("largest gradient difference, 2 x 2 windows against 1 x 4, relative to the parameter's largest: " << worst);
    CHECK(worst < 1e-5);
    CHECK(two.loss == doctest::Approx(big_loss).epsilon(1e-6));
}

TEST_CASE("RunState: saved and loaded exactly; a bad file is a FormatError naming the field") {
    test::TempDir dir;
    const train::RunState s{.step = 12,
                            .epoch = 1,
                            .index = 7,
                            .tokens = 12 * 3 * 1024,
                            .seed = 18446744073709551615ull,
                            .generators = {{"dropout", {.key = 5, .offset = 99}}},
                            .arguments = {{"--lr", "3e-4"}, {"--batch", "3"}},
                            .files = {{"model.safetensors", 0x0123456789abcdefull}, {"optimiser.safetensors", 0xffffffffffffffffull}}};
    train::save_run_state(s, dir.path / "run_state.json");
    CHECK(train::load_run_state(dir.path / "run_state.json") == s);

    auto write = [&](const std::string& text) {
        std::ofstream(dir.path / "bad.json") << text;
        return dir.path / "bad.json";
    };
    const std::string bad = (dir.path / "bad.json").string();
    CHECK_THROWS_WITH_AS(train::load_run_state(write("{")), doctest::Contains((bad + ": not valid JSON").c_str()), FormatError);
    CHECK_THROWS_WITH_AS(train::load_run_state(write(R"({"format": "remat run state 1"})")),
                         (bad + ": \"step\" is missing").c_str(), FormatError);
    CHECK_THROWS_WITH_AS(
        train::load_run_state(write(R"({"format": "remat run state 1", "step": -1, "epoch": 0, "index": 0})")),
        (bad + ": \"step\" must be a whole number of at least 0").c_str(), FormatError);
    CHECK_THROWS_WITH_AS(train::load_run_state(write(std::string(2 << 20, ' '))), doctest::Contains("limit"), FormatError);
}

TEST_CASE("file_digest: every byte counts, however the file is read; SaveFolderLock: one run per folder") {
    test::TempDir dir;
    std::string bytes(3 << 20, 'x');  // past the 1 MiB reading buffer, not a multiple of 32 at the end
    bytes += "tail";
    std::ofstream(dir.path / "a", std::ios::binary) << bytes;
    bytes[(3 << 20) + 1] = 'T';
    std::ofstream(dir.path / "b", std::ios::binary) << bytes;
    bytes.replace(0, 16, "AAAAAAAABBBBBBBB");
    std::ofstream(dir.path / "b", std::ios::binary) << bytes;
    bytes.replace(0, 16, "BBBBBBBBAAAAAAAA");  // two words swapped: the same bytes, elsewhere
    std::ofstream(dir.path / "c", std::ios::binary) << bytes;
    CHECK(train::file_digest(dir.path / "a") == train::file_digest(dir.path / "a"));
    CHECK(train::file_digest(dir.path / "a") != train::file_digest(dir.path / "b"));
    CHECK(train::file_digest(dir.path / "b") != train::file_digest(dir.path / "c"));

    const std::filesystem::path out = dir.path / "out";
    {
        const train::SaveFolderLock first(out);  // creates the folder
        CHECK(std::filesystem::is_directory(out));
        CHECK_THROWS_WITH_AS(train::SaveFolderLock{out}, (out.string() + ": another run is saving into this folder; give this one another "
                                                                         "folder, or wait for it").c_str(), ValueError);
    }
    CHECK_NOTHROW(train::SaveFolderLock{out});  // released with the first
}

TEST_CASE("run folders: written whole, found by number, pruned to the latest") {
    test::TempDir dir;
    auto save = [&](std::int64_t step) {
        train::write_folder_atomically(train::run_folder(dir.path, step), [&](const std::filesystem::path& p) {
            std::ofstream(p / "weights") << step;
            train::save_run_state({.step = step}, p / "run_state.json");
        });
    };
    CHECK_FALSE(train::latest_run_folder(dir.path));
    save(2);
    save(10);
    save(9);
    std::filesystem::create_directories(dir.path / "checkpoint-11");       // incomplete: no run_state.json
    std::filesystem::create_directories(dir.path / ".checkpoint-12.partial");  // a crash's leftover
    std::filesystem::create_directories(dir.path / "checkpoint-x1");
    CHECK(*train::latest_run_folder(dir.path) == dir.path / "checkpoint-10");

    SUBCASE("a failed fill leaves the old folder as it was") {
        CHECK_THROWS_AS(train::write_folder_atomically(train::run_folder(dir.path, 10),
                                                       [](const std::filesystem::path&) { throw ValueError("disk full"); }),
                        ValueError);
        std::ifstream in(dir.path / "checkpoint-10" / "weights");
        std::string text;
        in >> text;
        CHECK(text == "10");
    }
    SUBCASE("keep_latest") {
        train::keep_latest(dir.path, 2);
        CHECK_FALSE(std::filesystem::exists(dir.path / "checkpoint-2"));
        CHECK(std::filesystem::exists(dir.path / "checkpoint-9"));
        CHECK(std::filesystem::exists(dir.path / "checkpoint-10"));
        CHECK(std::filesystem::exists(dir.path / "checkpoint-11"));  // not a complete one: left alone
    }
}
