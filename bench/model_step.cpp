// A training step (forward + backward of the LM loss, dropout 0) of a GPT-2 or a Llama driven from
// stdin, one command per line, so that an orchestrator (bench/compare.py) can interleave remat's
// steps with another framework's (A B A B …) and compare them in one run.
//
//   build/bench/model_step tiny|small|deep|smollm [--precision fp32|bf16] [policy …]
//       policies default to: none; budget:SIZE and auto are planned at start (the plan on stderr);
//       bf16 runs every step (and the planning) inside an Autocast scope (remat/ops/precision.hpp)
//
// Commands (one reply line each, flushed):
//   params        → "<parameters> <matmul parameters>"   (matmul: all but GPT-2's position embedding)
//   step <policy> → "<ms> <peak activation bytes>"      zero_grad (untimed), then one timed step
//   sgemm         → "<GFLOP/s>"   best of 10 raw cblas_sgemm 1024×1024×1024 (OpenBLAS on all cores)
//   bf16gemm      → "<GFLOP/s>"   best of 20 bf16 products 1024×1024×1024, B transposed (a Linear's weight),
//                                 fp32 out, as remat runs them: oneDNN in two bands on remat's pool
//   quit
//
// Peak activation memory is bench/checkpoint's: the memory tracker's peak during the step minus
// the bytes alive before it (parameters and their gradients excluded). Every policy gets its own
// copy of the model, initialised from the same seed; the tokens are the same random ids each step.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/configs.hpp"
#include "remat/ops/precision.hpp"
#include "src/ops/gemm.hpp"
#include "remat/ad/tape.hpp"
#include "remat/layers/modes.hpp"
#include "remat/planning/memory_limit.hpp"
#include "remat/planning/plan.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;
using Clock = std::chrono::steady_clock;

namespace {
struct Bench {
    const char* name;
    bool llama;  // else GPT-2
    std::size_t L, C, H, V, T, B;
    std::size_t kv_heads = 0, intermediate = 0;  // Llama only
};
const Bench configs[] = {{"tiny", false, 4, 128, 4, 1024, 64, 4},
                         {"small", false, 12, 768, 12, 50257, 128, 2},
                         {"deep", false, 24, 256, 8, 8192, 256, 4},
                         {"smollm", true, 30, 576, 9, 49152, 256, 2, 3, 1536}};  // SmolLM2-135M's shape

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double sgemm_gflops() {
    // OpenBLAS on every core, as a plain BLAS user runs it (remat sets it to one thread while its own
    // pool splits the GEMMs: remat/ops/threads.hpp).
    const int threads = openblas_get_num_threads();
    openblas_set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
    const int n = 1024;
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    double best = 1e30;
    for (int r = 0; r < 11; ++r) {  // the first one warms up OpenBLAS's threads and buffers
        const auto t0 = Clock::now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        if (r > 0) best = std::min(best, ms_since(t0));
    }
    openblas_set_num_threads(threads);
    return 2.0 * n * n * n / (best * 1e6);
}

double bf16_gemm_gflops() {
    const std::size_t n = 1024;
    std::vector<std::uint16_t> a(n * n, 0x3F00), b(n * n, 0x3E80);  // 0.5, 0.25
    std::vector<float> c(n * n);
    double best = 1e30;
    for (int r = 0; r < 21; ++r) {  // the first one builds oneDNN's kernels
        const auto t0 = Clock::now();
        ops::detail::gemm_bf16(false, true, n, n, n, a.data(), b.data(), 0.0f, c.data());
        if (r > 0) best = std::min(best, ms_since(t0));
    }
    return 2.0 * n * n * n / (best * 1e6);
}

// Builds one model per policy, then answers commands until quit.
template <class Plain, class Create>
int serve(const Bench& bench, const std::vector<std::string>& specs, Create create, std::size_t unmatmul_params,
          Precision precision) {
    const Autocast autocast(precision);
    IdTensor ids = IdTensor::from_shape({bench.B, bench.T});
    Generator token_rng(7);
    std::vector<std::uint32_t> bits(ids.size());
    token_rng.fill_bits(bits.data(), bits.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = bits[i] % bench.V;

    using Model = decltype(set_checkpointing(std::declval<Plain>()));
    std::map<std::string, Model> models;
    ad::Tape& tape = ad::default_tape();
    auto step = [&](Model& model) {
        Var logits = model(ids);
        tape.backward(model.loss(logits, ids));
    };
    for (const std::string& spec : specs) {
        Generator init(1);  // the same weights for every policy
        const Policy policy = Policy::parse(spec);
        Model& m = models.emplace(spec, set_checkpointing(create(init), policy.needs_planning() ? Policy::blocks() : policy))
                       .first->second;
        nn::testmode(m);
        step(m);  // allocates every parameter gradient, so steps measure activations only
        if (policy.needs_planning()) {  // budget:SIZE or auto: planned here, before any timed step
            const planning::Profile profile = planning::profile_checkpointing(m, [&] { return m.loss(m(ids), ids); });
            const std::size_t budget = policy.kind == Policy::Kind::budget
                                           ? policy.budget_bytes
                                           : planning::activation_budget(planning::memory_limit(), 0);
            const auto plan = planning::plan_checkpointing(profile, budget);
            if (!plan) {
                std::fprintf(stderr, "%s: no plan fits; the smallest budget is %zu bytes\n", spec.c_str(),
                             planning::smallest_budget(profile));
                return 2;
            }
            set_policy(m, *plan);
            std::fprintf(stderr, "%s: %s (profiled in %.1f s)\n", spec.c_str(), plan->to_string().c_str(),
                         profile.profiling_seconds);
        }
    }

    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd, arg;
        in >> cmd >> arg;
        if (cmd == "quit") break;
        if (cmd == "params") {
            const std::size_t all = tree::count_parameters(models.begin()->second);
            std::printf("%zu %zu\n", all, all - unmatmul_params);
        } else if (cmd == "sgemm") {
            std::printf("%.1f\n", sgemm_gflops());
        } else if (cmd == "bf16gemm") {
            std::printf("%.1f\n", bf16_gemm_gflops());
        } else if (cmd == "step" && models.count(arg)) {
            tape.zero_grad();
            memory::PeakScope scope;
            const auto t0 = Clock::now();
            step(models.at(arg));
            const double ms = ms_since(t0);
            std::printf("%.3f %zu\n", ms, scope.peak_above_baseline());
        } else {
            std::printf("error: unknown command '%s'\n", line.c_str());
        }
        std::fflush(stdout);
    }
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    const Bench* bench = nullptr;
    if (argc >= 2)
        for (const Bench& b : configs)
            if (argv[1] == std::string(b.name)) bench = &b;
    if (!bench) {
        std::fprintf(stderr, "usage: model_step tiny|small|deep|smollm [policy …]   (then commands on stdin)\n");
        return 2;
    }
    std::vector<std::string> specs(argv + 2, argv + argc);
    Precision precision = Precision::fp32;
    if (specs.size() >= 2 && specs[0] == "--precision") {
        precision = parse_precision(specs[1]);
        specs.erase(specs.begin(), specs.begin() + 2);
    }
    if (specs.empty()) specs.push_back("none");

    if (bench->llama) {
        const llama::Settings s = remat::bench::llama_settings(bench->L, bench->C, bench->H, bench->kv_heads, bench->intermediate, bench->V, 100000);
        return serve<llama::Model>(*bench, specs, [&](Generator& init) { return llama::create(s, init); }, 0, precision);
    }
    const gpt2::Config config = remat::bench::gpt2_config(bench->L, bench->C, bench->H, bench->V, std::max<std::size_t>(bench->T, 1024));
    return serve<gpt2::Model>(*bench, specs, [&](Generator& init) { return gpt2::create(config, init); },
                              config.n_positions * config.n_embd, precision);
}
