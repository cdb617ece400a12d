#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "remat/hf/safetensors.hpp"
#include "remat/layers.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "remat/train/schedules.hpp"
#include "remat/train/state_file.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {
auto make_model() {
    Generator rng(11);
    return nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(3, 8, g); }, nn::tanh,
                          [](Generator& g) { return nn::Linear::create(8, 1, g); });
}
using Model = decltype(make_model());

struct Data {
    Tensor x = empty(Shape{16, 3}), y = empty(Shape{16, 1});
    Data() {
        Generator g(3);
        g.fill_normal(x.data(), x.size());
        g.fill_normal(y.data(), y.size());
    }
};

template <class State>
void train_steps(State& state, Model& model, const Data& d, int steps) {
    const auto schedule = train::CosineSchedule{.lr = 1e-2, .warmup_steps = 3, .total_steps = 20};
    for (int i = 0; i < steps; ++i) {
        auto [loss, grads] = train::withgradient([&](auto& m) { return ops::mse(m(Var(d.x)), Var(d.y)); }, model);
        train::set_learning_rate(state, schedule);
        train::update(state, model, grads);
    }
}

// train_steps with two states that each update their own share of the parameters (ZeRO-1's ranks).
template <class State>
void train_shares(State& a, State& b, Model& model, const Data& d, int steps) {
    const auto schedule = train::CosineSchedule{.lr = 1e-2, .warmup_steps = 3, .total_steps = 20};
    for (int i = 0; i < steps; ++i) {
        auto [loss, grads] = train::withgradient([&](auto& m) { return ops::mse(m(Var(d.x)), Var(d.y)); }, model);
        for (State* s : {&a, &b}) {
            train::set_learning_rate(*s, schedule);
            train::update(*s, model, grads);
        }
    }
}

bool same_parameters(Model& a, Model& b) {
    auto pa = tree::parameters(a), pb = tree::parameters(b);
    for (std::size_t i = 0; i < pa.size(); ++i)
        if (!test::same_bits(pa[i]->value, pb[i]->value)) return false;
    return pa.size() == pb.size();
}
}  // namespace

TEST_CASE("save_state / load_state: a resumed run is bitwise the uninterrupted one") {
    test::TempDir dir;
    const auto file = dir.path / "optimiser.safetensors";
    const Data d;

    Model straight = make_model();
    auto s1 = train::setup(train::AdamW{.weight_decay = 0.1f}, straight);
    train_steps(s1, straight, d, 10);

    Model resumed = make_model();
    {
        auto first = train::setup(train::AdamW{.weight_decay = 0.1f}, resumed);
        train_steps(first, resumed, d, 4);
        train::save_state(first, file);
    }
    auto s2 = train::setup(train::AdamW{}, resumed);  // other settings: the file's win
    train::load_state(s2, file);
    CHECK(s2.step == 4);
    CHECK(s2.rule.weight_decay == 0.1f);
    train_steps(s2, resumed, d, 6);

    CHECK(s2.step == s1.step);
    CHECK(same_parameters(straight, resumed));
    CHECK(test::same_bits(std::get<0>(s1.moments[1].layers).weight.value, std::get<0>(s2.moments[1].layers).weight.value));

    SUBCASE("the file names each moment by parameter path") {
        const auto f = hf::SafetensorsFile::open(file);
        CHECK(f.find("moments.0.layers.0.weight") != nullptr);
        CHECK(f.find("moments.1.layers.2.bias") != nullptr);
        CHECK(f.tensors().size() == 8);
    }
    SUBCASE("a state of another rule is refused") {
        auto sgd = train::setup(train::SGD{}, resumed);
        CHECK_THROWS_WITH_AS(train::load_state(sgd, file), doctest::Contains("the state of rule AdamW, loading into SGD"),
                             hf::FormatError);
    }
    SUBCASE("a model of another shape is refused, naming the tensor, and the state is untouched") {
        Generator rng(1);
        auto other = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(3, 4, g); }, nn::tanh,
                                    [](Generator& g) { return nn::Linear::create(4, 1, g); });
        auto st = train::setup(train::AdamW{}, other);
        CHECK_THROWS_WITH_AS(train::load_state(st, file),
                             doctest::Contains("tensor moments.0.layers.0.weight: expected (4, 3), got (8, 3)"),
                             hf::FormatError);
        CHECK(st.step == 0);
        CHECK(st.rule.weight_decay == 0.01f);
    }
    SUBCASE("a missing moment is named") {
        Generator rng(1);
        auto bigger = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(3, 8, g); },
                                     nn::tanh, [](Generator& g) { return nn::Linear::create(8, 1, g); },
                                     [](Generator& g) { return nn::Linear::create(1, 1, g); });
        auto st = train::setup(train::AdamW{}, bigger);
        CHECK_THROWS_WITH_AS(train::load_state(st, file), doctest::Contains("tensor moments.1.layers.3.weight: missing"),
                             hf::FormatError);
    }
}

TEST_CASE("a sharded state (ZeRO-1): each share saves its own moments; any set of shares loads from all files") {
    test::TempDir dir;
    const Data d;
    // Four parameters: layers.0.weight, layers.0.bias, layers.2.weight, layers.2.bias.
    Model straight = make_model();
    auto whole = train::setup(train::AdamW{.weight_decay = 0.1f}, straight);
    train_steps(whole, straight, d, 10);

    // Two "ranks" that update their own share each (update() leaves the others), so together they
    // step the model as the whole state does.
    Model sharded = make_model();
    const std::vector<bool> first{true, true, false, false}, second{false, false, true, true};
    std::vector<fs::path> files{dir.path / "optimiser-rank-0-of-2.safetensors", dir.path / "optimiser-rank-1-of-2.safetensors"};
    {
        auto a = train::setup(train::AdamW{.weight_decay = 0.1f}, sharded, first);
        auto b = train::setup(train::AdamW{.weight_decay = 0.1f}, sharded, second);
        CHECK(std::get<0>(a.moments[0].layers).weight.value.size() == 24);
        CHECK(std::get<2>(a.moments[0].layers).weight.value.size() == 0);  // not its share: no moments
        train_shares(a, b, sharded, d, 4);
        train::save_state(a, files[0]);
        train::save_state(b, files[1]);
        CHECK(hf::SafetensorsFile::open(files[0]).tensors().size() == 4);  // two moments of two parameters
        CHECK(hf::SafetensorsFile::open(files[1]).find("moments.1.layers.2.weight") != nullptr);
    }
    SUBCASE("unsharded from both files: bitwise the run that never sharded") {
        auto resumed = train::setup(train::AdamW{}, sharded);
        train::load_state(resumed, std::span<const fs::path>(files));
        CHECK(resumed.step == 4);
        train_steps(resumed, sharded, d, 6);
        CHECK(same_parameters(straight, sharded));
    }
    SUBCASE("another division (three parameters and one) goes on bitwise") {
        auto a = train::setup(train::AdamW{}, sharded, {true, true, true, false});
        auto b = train::setup(train::AdamW{}, sharded, {false, false, false, true});
        train::load_state(a, std::span<const fs::path>(files));
        train::load_state(b, std::span<const fs::path>(files));
        CHECK(a.rule.weight_decay == 0.1f);
        CHECK(std::get<2>(b.moments[1].layers).weight.value.size() == 0);
        train_shares(a, b, sharded, d, 6);
        CHECK(same_parameters(straight, sharded));
    }
    SUBCASE("one file short: the other share's moments are missing, named") {
        auto resumed = train::setup(train::AdamW{}, sharded);
        CHECK_THROWS_WITH_AS(train::load_state(resumed, files[0]), doctest::Contains("tensor moments.0.layers.2.weight: missing"),
                             hf::FormatError);
    }
    SUBCASE("a moment in two files, or files of different steps, is refused naming both") {
        auto whole_at_10 = train::setup(train::AdamW{.weight_decay = 0.1f}, straight);
        train_steps(whole_at_10, straight, d, 10);
        const fs::path other = dir.path / "optimiser-other.safetensors";
        train::save_state(whole_at_10, other);
        auto resumed = train::setup(train::AdamW{}, sharded);
        const std::vector<fs::path> mixed{files[0], other};
        try {
            train::load_state(resumed, std::span<const fs::path>(mixed));
            FAIL("loaded");
        } catch (const hf::FormatError& e) {
            const std::string message = e.what();
            CHECK(message.find("optimiser-other.safetensors: tensor moments.0.layers.0.weight: also in optimiser-rank-0-of-2.safetensors") !=
                  std::string::npos);
            CHECK(message.find("optimiser-other.safetensors: step 10, optimiser-rank-0-of-2.safetensors: step 4") != std::string::npos);
        }
        CHECK(resumed.step == 0);  // untouched
    }
}
