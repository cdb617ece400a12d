// The planner: optimal against brute force on small chains; on real models, the measured peak within
// the budget and within 10 % of the prediction, and gradients bitwise those of `none`.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/layers/modes.hpp"
#include "remat/planning/memory_limit.hpp"
#include "remat/planning/plan.hpp"
#include "remat/tree/parameters.hpp"
#include "tests/checkpoint/stack.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/table_model.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;
using planning::Option;

namespace {

// Every plan of n blocks: each block plain, selective or checkpointed, or segments of ≥ 2 blocks.
void every_plan(std::size_t n, std::vector<CheckpointOptions>& prefix,
                const std::function<void(const std::vector<CheckpointOptions>&)>& visit) {
    const std::size_t i = prefix.size();
    if (i == n) return visit(prefix);
    for (int o = 0; o < 3; ++o) {
        CheckpointOptions c;
        c.active = o != 0;
        if (o == 1) c.keep = Policy::selective_keep;
        prefix.push_back(c);
        every_plan(n, prefix, visit);
        prefix.pop_back();
    }
    for (std::size_t length = 2; i + length <= n; ++length) {
        for (std::size_t j = 0; j < length; ++j) {
            CheckpointOptions c;
            c.segment = j == 0 ? length : 0;
            prefix.push_back(c);
        }
        every_plan(n, prefix, visit);
        prefix.resize(i);
    }
}

// A made-up profile: two kinds of blocks in a random order, costs random but shaped like real ones
// (plain keeps most and is fastest, checkpointed keeps only its input and is slowest).
planning::Profile random_profile(std::size_t n, std::uint64_t seed) {
    Generator g(seed);
    auto draw = [&](std::size_t lo, std::size_t hi) {
        std::uint32_t b;
        g.fill_bits(&b, 1);
        return lo + b % (hi - lo + 1);
    };
    planning::Profile p;
    for (int k = 0; k < 2; ++k) {
        planning::BlockCost c;
        c.kind = "kind " + std::to_string(k);
        c.input_bytes = c.output_bytes = draw(50, 150);
        const double t = static_cast<double>(draw(100, 200));
        auto& plain = c.options[0];
        auto& selective = c.options[1];
        auto& checkpointed = c.options[2];
        plain = {c.input_bytes + draw(50, 400), c.input_bytes + draw(200, 1200), 0, draw(0, 1) == 1, t};
        plain.backward_peak = plain.retained + draw(100, 600);
        selective = {c.input_bytes + draw(50, 400), c.input_bytes + draw(50, 300), 0, true, t + draw(5, 40)};
        selective.backward_peak = plain.backward_peak + draw(0, 100);
        checkpointed = {c.input_bytes + draw(50, 400), c.input_bytes, 0, true, t + draw(40, 100)};
        checkpointed.backward_peak = plain.backward_peak + draw(0, 200);
        p.costs.push_back(c);
    }
    for (std::size_t i = 0; i < n; ++i) p.blocks.push_back(draw(0, 1));
    p.paths.assign(n, "");
    p.stem_peak = draw(100, 500);
    p.stem_retained = draw(50, 200);
    p.head_peak = draw(200, 2000);
    p.rest_seconds = 50;
    return p;
}

std::size_t measured_peak(const std::function<void()>& step) {
    step();  // warm-up: every gradient buffer allocated
    ad::default_tape().zero_grad();
    memory::PeakScope scope;
    step();
    return scope.peak_above_baseline();
}

std::vector<Tensor> gradients_of(std::vector<Param*> params) {
    std::vector<Tensor> g;
    for (Param* p : params) g.push_back(*ad::default_tape().grad(p->value));
    return g;
}

bool same_gradients(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!test::same_bits(a[i], b[i])) return false;
    return true;
}

// Plans `model` at budgets spread between its smallest and `none`'s peak and checks each plan.
void check_plans(models::Model& model, Generator& dropout, const std::function<Var()>& loss) {
    ad::Tape& tape = ad::default_tape();
    auto step = [&] { tape.backward(loss()); };
    tape.zero_grad();
    model.set_policy(Policy::none());
    const Generator::State before = dropout.state();
    step();
    const std::vector<Tensor> reference = gradients_of(model.parameters());
    dropout.set_state(before);

    const planning::Profile profile = model.profile_checkpointing(loss, {.rounds = 1});
    CHECK(dropout.state() == before);  // profiling draws nothing from the model's generators
    CHECK(profile.costs.size() == 1);
    const std::size_t low = planning::smallest_budget(profile), high = planning::predict(profile, Policy::none()).peak;
    REQUIRE(low < high);
    CHECK(!planning::plan_checkpointing(profile, low - 1));
    for (double f : {0.0, 0.2, 0.45, 0.7, 1.0}) {
        const auto budget = static_cast<std::size_t>(static_cast<double>(low) + f * static_cast<double>(high - low));
        const auto plan = planning::plan_checkpointing(profile, budget);
        REQUIRE(plan);
        const planning::Prediction predicted = planning::predict(profile, *plan);
        CHECK(predicted.peak <= budget);
        model.set_policy(*plan);
        const std::size_t peak = measured_peak(step);
        INFO("budget " << budget << ", plan " << plan->to_string() << ": predicted " << predicted.peak << ", measured " << peak);
        CHECK(peak <= budget);
        CHECK(std::abs(static_cast<double>(peak) - static_cast<double>(predicted.peak)) <= 0.1 * static_cast<double>(peak));
        tape.zero_grad();
        dropout.set_state(before);
        step();
        CHECK(same_gradients(gradients_of(model.parameters()), reference));
        dropout.set_state(before);
    }
    for (const char* fixed : {"none", "blocks", "every:2", "sqrt", "selective"}) {
        const Policy policy = Policy::parse(fixed);
        model.set_policy(policy);
        const std::size_t peak = measured_peak(step), predicted = planning::predict(profile, policy).peak;
        INFO(fixed << ": predicted " << predicted << ", measured " << peak);
        CHECK(std::abs(static_cast<double>(peak) - static_cast<double>(predicted)) <= 0.1 * static_cast<double>(peak));
    }
}

}  // namespace

TEST_CASE("memory sizes") {
    CHECK(parse_memory_size("11GB") == 11'000'000'000u);
    CHECK(parse_memory_size("4.5GiB") == 4'831'838'208u);
    CHECK(parse_memory_size("512 MiB") == 536'870'912u);
    CHECK(parse_memory_size("1.5KB") == 1500u);
    CHECK(parse_memory_size("100B") == 100u);
    CHECK(memory_size_text(11'000'000'000u) == "11GB");
    CHECK(memory_size_text(4'831'838'208u) == "4608MiB");
    CHECK(memory_size_text(123) == "123B");
    for (const char* bad : {"", "11", "GB", "11gb", "1.2.3GB", "11 GB ", "-1GB", "9999999999TB", "11XB"})
        CHECK_THROWS_AS(parse_memory_size(bad), ValueError);
    CHECK_THROWS_WITH_AS(parse_memory_size("11Gb"), doctest::Contains("unknown unit \"Gb\""), ValueError);
}

TEST_CASE("policies for plans parse and print") {
    const Policy plan = Policy::parse("plan:2n3c3gs");
    REQUIRE(plan.kind == Policy::Kind::plan);
    REQUIRE(plan.plan.size() == 9);
    CHECK(!plan.plan[0].active);
    CHECK(plan.plan[2].active);
    CHECK(plan.plan[5].segment == 3);
    CHECK(plan.plan[6].segment == 0);
    CHECK(plan.plan[8].keep == Policy::selective_keep);
    CHECK(plan.to_string() == "plan:2n3c3gs");
    CHECK(Policy::parse("budget:3GiB").budget_bytes == 3u << 30);
    CHECK(Policy::parse("budget:3GiB").to_string() == "budget:3GiB");
    CHECK(Policy::parse("auto").kind == Policy::Kind::fit_memory);
    for (const char* bad : {"plan:", "plan:3", "plan:0n", "plan:2x", "budget:", "budget:3", "plan:99999999n"})
        CHECK_THROWS_AS(Policy::parse(bad), ValueError);
    // A request is not a policy a model can take.
    using test::checkpointing::make_stack;
    CHECK_THROWS_WITH_AS(set_checkpointing(make_stack(1, 2, 0, nullptr), Policy::budget(1000)),
                         doctest::Contains("plan_checkpointing"), ValueError);
    CHECK_THROWS_WITH_AS(set_checkpointing(make_stack(1, 2, 0, nullptr), Policy::parse("plan:3c")),
                         doctest::Contains("is for 3 blocks; the model has 2"), ValueError);
    auto model = set_checkpointing(make_stack(1, 2, 0, nullptr), Policy::parse("plan:nc"));
    CHECK(!model.h[0].options.active);
    CHECK(model.h[1].options.active);
    CHECK(model.h[1].options.index == 1);
}

TEST_CASE("the planner is optimal for its profile: brute force on chains of up to 7 blocks") {
    int plans_checked = 0;
    for (std::size_t n = 1; n <= 7; ++n)
        for (std::uint64_t seed = 0; seed < 6; ++seed) {
            const planning::Profile p = random_profile(n, seed * 100 + n);
            std::vector<std::pair<std::size_t, double>> all;  // (peak, seconds) of every plan
            std::vector<CheckpointOptions> prefix;
            every_plan(n, prefix, [&](const std::vector<CheckpointOptions>& o) {
                const planning::Prediction r = planning::predict(p, o);
                all.emplace_back(r.peak, r.seconds);
            });
            std::size_t smallest = SIZE_MAX, largest = 0;
            for (const auto& [peak, s] : all) {
                smallest = std::min(smallest, peak);
                largest = std::max(largest, peak);
            }
            CHECK(planning::smallest_budget(p) == smallest);
            Generator g(seed);
            for (int trial = 0; trial < 12; ++trial) {
                std::uint32_t bits;
                g.fill_bits(&bits, 1);
                const std::size_t budget = smallest - 5 + bits % (largest - smallest + 10);
                double best = INFINITY;
                for (const auto& [peak, s] : all)
                    if (peak <= budget) best = std::min(best, s);
                const auto plan = planning::plan_checkpointing(p, budget);
                INFO("n " << n << " seed " << seed << " budget " << budget);
                REQUIRE(plan.has_value() == std::isfinite(best));
                if (!plan) continue;
                const planning::Prediction r = planning::predict(p, *plan);
                CHECK(r.peak <= budget);
                CHECK(r.seconds == doctest::Approx(best).epsilon(1e-12));
                ++plans_checked;
            }
        }
    CHECK(plans_checked > 300);
}


TEST_CASE("planned GPT-2: within budget, predicted within 10 %, gradients those of none") {
    auto dropout = std::make_shared<Generator>(11);
    IdTensor ids = IdTensor::from_shape({2, 32});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 7) % 96);
    SUBCASE("dropout on: the plan must replay it") {
        auto model = test::table_model("GPT2LMHeadModel", {6, 64, 4, 96, 32}, 3, Policy::blocks(), dropout);
        model->set_training(true);
        check_plans(*model, *dropout, [&] { return test::loss_of(*model, ids, ids); });
    }
    SUBCASE("dropout off (remat run's mode)") {
        auto model = test::table_model("GPT2LMHeadModel", {6, 64, 4, 96, 32}, 3, Policy::blocks(), dropout);
        model->set_training(false);
        check_plans(*model, *dropout, [&] { return test::loss_of(*model, ids, ids); });
    }
    SUBCASE("longer sequences: the kernels split rows between threads") {
        auto longer = test::table_model("GPT2LMHeadModel", {8, 64, 4, 128, 128}, 3, Policy::blocks(), dropout);
        longer->set_training(false);
        IdTensor long_ids = IdTensor::from_shape({2, 128});
        for (std::size_t i = 0; i < long_ids.size(); ++i) long_ids.data()[i] = static_cast<std::int64_t>((i * 37) % 128);
        check_plans(*longer, *dropout, [&] { return test::loss_of(*longer, long_ids, long_ids); });
    }
}

TEST_CASE("planned BERT masked LM: within budget, predicted within 10 %, gradients those of none") {
    auto dropout = std::make_shared<Generator>(12);
    // --n-embd 64 also sets intermediate_size = 4 × 64.
    auto model = test::table_model("BertForMaskedLM", {6, 64, 4, 96, 32}, 4, Policy::blocks(), dropout);
    model->set_training(true);
    IdTensor ids = IdTensor::from_shape({2, 32}), labels = IdTensor::from_shape({2, 32});
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids.data()[i] = static_cast<std::int64_t>((i * 5) % 96);
        labels.data()[i] = i % 7 == 0 ? ids.data()[i] : -100;
    }
    check_plans(*model, *dropout, [&] { return test::loss_of(*model, ids, labels); });
}

TEST_CASE("the memory limit: MemAvailable + RSS, or the lowest cgroup limit up the tree") {
    const test::TempDir root;
    auto write = [&](const std::string& path, const std::string& text) {
        std::filesystem::create_directories((root.path / path).parent_path());
        std::ofstream(root.path / path) << text;
    };
    write("proc/self/status", "Name:\tremat\nVmRSS:\t  1048576 kB\n");
    write("proc/meminfo", "MemTotal: 25165824 kB\nMemAvailable: 20971520 kB\n");
    SUBCASE("no cgroup limit: MemAvailable + RSS") {
        write("proc/self/cgroup", "4:memory:/a/b\n0::/\n");
        write("sys/fs/cgroup/memory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
        const planning::MemoryLimit m = planning::memory_limit(root.path);
        CHECK(m.resident == (std::size_t{1} << 30));
        CHECK(m.limit == (std::size_t{21} << 30));
        CHECK(m.source == "MemAvailable + RSS");
    }
    SUBCASE("cgroup v1: a parent's limit counts") {
        write("proc/self/cgroup", "7:blkio:/\n4:cpu,memory:/a/b\n");
        write("sys/fs/cgroup/memory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
        write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "11811160064\n");
        const planning::MemoryLimit m = planning::memory_limit(root.path);
        CHECK(m.limit == 11811160064u);
        CHECK(m.source.find("a/memory.limit_in_bytes") != std::string::npos);
    }
    SUBCASE("cgroup v1: hierarchical_memory_limit") {
        write("proc/self/cgroup", "4:memory:/a\n");
        write("sys/fs/cgroup/memory/a/memory.stat", "cache 0\nhierarchical_memory_limit 5368709120\n");
        CHECK(planning::memory_limit(root.path).limit == (std::size_t{5} << 30));
    }
    SUBCASE("cgroup v2: memory.max up the tree, max meaning none") {
        write("proc/self/cgroup", "0::/user.slice/job\n");
        write("sys/fs/cgroup/user.slice/job/memory.max", "max\n");
        write("sys/fs/cgroup/user.slice/memory.max", "3221225472\n");
        CHECK(planning::memory_limit(root.path).limit == (std::size_t{3} << 30));
    }
    SUBCASE("the activation budget leaves the resident set, the reserve and the margin") {
        planning::MemoryLimit m{.limit = std::size_t{11} << 30, .source = "test", .resident = std::size_t{6} << 30};
        const std::size_t margin = planning::memory_margin(m.limit);
        CHECK(margin == (std::size_t{11} << 30) / 20 + (std::size_t{128} << 20));
        CHECK(planning::activation_budget(m, std::size_t{1} << 30) == (std::size_t{4} << 30) - margin);
        CHECK(planning::activation_budget(m, std::size_t{5} << 30) == 0);
    }
}
