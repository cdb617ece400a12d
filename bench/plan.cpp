// Checkpointing to a memory budget against the fixed policies, side by side in one run: GPT-2 small
// (L12 C768 H12 V50257 T128 B2) or deep (L24 C256 H8 V8192 T256 B4), dropout 0. Five budgets spaced
// evenly between `blocks`' measured peak and `none`'s; for each, the plan's measured peak activation
// memory and step time next to the fastest fixed policy (none, blocks, every:2/3/4/6, sqrt,
// selective) whose measured peak fits the same budget. Every plan's gradients are checked bitwise
// against none's.
//
//   build/bench/plan [small|deep] [--rounds N] [--json FILE]
//
// Rounds visit every policy and plan in turn (A B C … A B C …); each visit runs one untimed step,
// then the timed one, so that switching policy costs no measured time. Times are medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "models/gpt2/gpt2.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/layers/modes.hpp"
#include "remat/planning/plan.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;
using Clock = std::chrono::steady_clock;

namespace {
struct Bench {
    const char* name;
    std::size_t L, C, H, V, T, B;
};
const Bench configs[] = {{"small", 12, 768, 12, 50257, 128, 2}, {"deep", 24, 256, 8, 8192, 256, 4}};

struct Entry {
    std::string name;  // a fixed policy, or "budget K"
    Policy policy;
    std::size_t budget = 0;  // 0 for a fixed policy
    std::size_t predicted = 0;
    std::vector<double> ms;
    std::size_t peak = 0;
    bool identical = true;
    double median() const {
        std::vector<double> v = ms;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
};
}  // namespace

int main(int argc, char** argv) {
    const Bench* bench = &configs[1];
    int rounds = 5;
    std::string json;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--json" && i + 1 < argc) {
            json = argv[++i];
        } else {
            bench = nullptr;
            for (const Bench& b : configs)
                if (a == b.name) bench = &b;
            if (!bench) {
                std::fprintf(stderr, "usage: plan [small|deep] [--rounds N] [--json FILE]\n");
                return 2;
            }
        }
    }
    gpt2::Config config;
    config.n_layer = bench->L;
    config.n_embd = bench->C;
    config.n_head = bench->H;
    config.vocab_size = bench->V;
    config.n_positions = std::max<std::size_t>(bench->T, 1024);
    config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0f;
    IdTensor ids = IdTensor::from_shape({bench->B, bench->T});
    Generator token_rng(7);
    std::vector<std::uint32_t> bits(ids.size());
    token_rng.fill_bits(bits.data(), bits.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = bits[i] % bench->V;

    Generator init(1);
    auto model = set_checkpointing(gpt2::create(config, init), Policy::none());
    nn::testmode(model);
    ad::Tape& tape = ad::default_tape();
    auto loss = [&] { return model.loss(model(ids), ids); };
    auto step = [&] { tape.backward(loss()); };
    step();  // allocates every gradient: steps measure activations only

    const planning::Profile profile = planning::profile_checkpointing(model, loss);
    std::vector<Entry> entries;
    for (const char* fixed : {"none", "blocks", "every:2", "every:3", "every:4", "every:6", "sqrt", "selective"})
        entries.push_back({fixed, Policy::parse(fixed), 0, planning::predict(profile, Policy::parse(fixed)).peak, {}, 0, true});

    auto measure = [&](Entry& e) {
        set_policy(model, e.policy);
        tape.zero_grad();
        step();  // untimed: the switch of policy settles
        tape.zero_grad();
        memory::PeakScope scope;
        const auto t0 = Clock::now();
        step();
        e.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        e.peak = std::max(e.peak, scope.peak_above_baseline());
    };
    for (Entry& e : entries) measure(e);  // the fixed policies' peaks set the budgets
    const std::size_t low = entries[1].peak, high = entries[0].peak;
    for (int k = 1; k <= 5; ++k) {
        const std::size_t budget = low + (high - low) * static_cast<std::size_t>(k) / 6;
        const auto plan = planning::plan_checkpointing(profile, budget);
        if (!plan) {
            std::printf("budget %s: no plan fits (the profile's smallest is %s)\n", memory_size_text(budget).c_str(),
                        memory_size_text(planning::smallest_budget(profile)).c_str());
            continue;
        }
        entries.push_back({"budget " + std::to_string(k), *plan, budget, planning::predict(profile, *plan).peak, {}, 0, true});
        measure(entries.back());
    }
    for (Entry& e : entries) e.ms.clear();
    for (int r = 0; r < rounds; ++r)
        for (Entry& e : entries) measure(e);

    // Gradients against none's.
    auto gradients = [&](const Policy& p) {
        set_policy(model, p);
        tape.zero_grad();
        step();
        std::vector<Tensor> g;
        for (Param* param : tree::parameters(model)) g.push_back(*tape.grad(param->value));
        return g;
    };
    const std::vector<Tensor> reference = gradients(Policy::none());
    for (Entry& e : entries) {
        const std::vector<Tensor> g = gradients(e.policy);
        for (std::size_t i = 0; i < g.size(); ++i)
            e.identical = e.identical && std::memcmp(g[i].data(), reference[i].data(), g[i].size() * 4) == 0;
    }

    std::printf("GPT-2 %s (L%zu C%zu H%zu V%zu T%zu B%zu), median of %d rounds; profiled in %.1f s\n", bench->name, bench->L,
                bench->C, bench->H, bench->V, bench->T, bench->B, rounds, profile.profiling_seconds);
    for (const planning::BlockCost& c : profile.costs)
        std::printf("profile: %s: plain %.2f ms, selective %.2f ms, checkpointed %.2f ms (forward + backward, alone); "
                    "the rest of the step %.1f ms\n",
                    c.kind.c_str(), c[planning::Option::plain].seconds * 1e3, c[planning::Option::selective].seconds * 1e3,
                    c[planning::Option::checkpointed].seconds * 1e3, profile.rest_seconds * 1e3);
    const double none_ms = entries[0].median();
    std::printf("%-10s %-24s %10s %10s %9s %7s %10s %10s\n", "", "policy", "predicted", "measured", "ms/step", "time×",
                "predicted", "gradients");
    const double none_predicted = planning::predict(profile, Policy::none()).seconds;
    for (const Entry& e : entries)
        std::printf("%-10s %-24s %9.1fM %9.1fM %9.1f %7.3f %10.3f %10s\n", e.budget ? e.name.c_str() : "fixed",
                    e.policy.to_string().c_str(), e.predicted / 1e6, e.peak / 1e6, e.median(), e.median() / none_ms,
                    planning::predict(profile, e.policy).seconds / none_predicted, e.identical ? "bitwise =" : "DIFFER");
    std::printf("\n%-10s %10s %10s %9s   %-24s %10s %9s %8s\n", "budget", "MB", "plan MB", "plan ms", "best fixed that fits",
                "its MB", "its ms", "plan/it");
    for (const Entry& e : entries) {
        if (!e.budget) continue;
        const Entry* best = nullptr;
        for (const Entry& f : entries)
            if (!f.budget && f.peak <= e.budget && (!best || f.median() < best->median())) best = &f;
        std::string same;  // a plan that is a fixed policy's options, measured twice: the difference is noise
        for (const Entry& f : entries)
            if (!f.budget && Policy::planned(planning::options_of(profile, f.policy)).to_string() == e.policy.to_string())
                same = "  (the plan is " + f.name + ")";
        std::printf("%-10s %10.1f %10.1f %9.1f   %-24s %10.1f %9.1f %8.3f%s%s\n", e.name.c_str(), e.budget / 1e6, e.peak / 1e6,
                    e.median(), best ? best->name.c_str() : "(none fits)", best ? best->peak / 1e6 : 0.0,
                    best ? best->median() : 0.0, best ? e.median() / best->median() : 0.0,
                    e.peak <= e.budget ? "" : "  OVER BUDGET", same.c_str());
    }
    if (!json.empty()) {
        std::ofstream out(json);
        out << "{\"config\": \"" << bench->name << "\", \"points\": [";
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const Entry& e = entries[i];
            out << (i ? ", " : "") << "{\"name\": \"" << e.name << "\", \"policy\": \"" << e.policy.to_string()
                << "\", \"budget\": " << e.budget << ", \"predicted\": " << e.predicted << ", \"peak\": " << e.peak
                << ", \"ms\": " << e.median() << "}";
        }
        out << "]}\n";
    }
    return 0;
}
