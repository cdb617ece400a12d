// Time and peak activation memory of a GPT-2 training step (forward + backward of the LM loss) under
// each checkpoint policy, side by side in one run, as ratios to `none`. Also checks that every
// policy's gradients are bitwise identical to `none`'s.
//
//   build/bench/checkpoint [tiny|small|deep] [--rounds N]
//
// Configs (as in the PyTorch comparison of docs/benchmarks.md): tiny L4 C128 H4 V1024 T64 B4,
// small L12 C768 H12 V50257 T128 B2, deep L24 C256 H8 V8192 T256 B4. Dropout 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "models/gpt2/gpt2.hpp"
#include "remat/ad/tape.hpp"
#include "remat/layers/modes.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;
using Clock = std::chrono::steady_clock;

namespace {
struct Bench {
    const char* name;
    std::size_t L, C, H, V, T, B;
};
const Bench configs[] = {{"tiny", 4, 128, 4, 1024, 64, 4}, {"small", 12, 768, 12, 50257, 128, 2}, {"deep", 24, 256, 8, 8192, 256, 4}};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
    const Bench* bench = &configs[0];
    int rounds = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
            continue;
        }
        bench = nullptr;
        for (const Bench& b : configs)
            if (a == b.name) bench = &b;
        if (!bench) {
            std::fprintf(stderr, "usage: checkpoint [tiny|small|deep] [--rounds N]\n");
            return 2;
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

    const char* policies[] = {"none", "blocks", "every:2", "sqrt", "selective"};
    constexpr std::size_t P = std::size(policies);
    using Model = decltype(set_checkpointing(std::declval<gpt2::Model>()));
    std::vector<Model> models;
    for (const char* spec : policies) {
        Generator init(1);  // the same weights for every policy
        models.push_back(set_checkpointing(gpt2::create(config, init), Policy::parse(spec)));
        nn::testmode(models.back());
    }
    ad::Tape& tape = ad::default_tape();
    auto step = [&](Model& model) {
        Var logits = model(ids);
        tape.backward(model.loss(logits, ids));
    };
    for (auto& model : models) step(model);  // warm-up; allocates every parameter gradient (not activations)

    // Rounds visit the policies in turn (A B C … A B C …), so drift and noise hit all alike.
    std::vector<std::vector<double>> times(P);
    std::vector<std::size_t> peaks(P, 0);
    for (int r = 0; r < rounds; ++r)
        for (std::size_t p = 0; p < P; ++p) {
            tape.zero_grad();
            memory::PeakScope scope;
            const auto t0 = Clock::now();
            step(models[p]);
            times[p].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            peaks[p] = std::max(peaks[p], scope.peak_above_baseline());
        }
    // The last round's gradients of each policy against none's.
    tape.zero_grad();
    std::vector<std::vector<Tensor>> grads(P);
    for (std::size_t p = 0; p < P; ++p) {
        tape.zero_grad();
        step(models[p]);
        for (Param* param : tree::parameters(models[p])) grads[p].push_back(*tape.grad(param->value));
    }
    struct Result {
        double ms;
        std::size_t peak;
        bool identical;
    };
    std::vector<Result> results;
    for (std::size_t p = 0; p < P; ++p) {
        bool identical = true;
        for (std::size_t i = 0; i < grads[p].size(); ++i)
            identical = identical && std::memcmp(grads[p][i].data(), grads[0][i].data(), grads[p][i].size() * 4) == 0;
        results.push_back({median(times[p]), peaks[p], identical});
    }
    std::printf("GPT-2 %s (L%zu C%zu H%zu V%zu T%zu B%zu), forward+backward of the LM loss, median of %d rounds\n",
                bench->name, bench->L, bench->C, bench->H, bench->V, bench->T, bench->B, rounds);
    std::printf("%-10s %10s %8s %14s %8s %10s\n", "policy", "ms/step", "time×", "peak act. MB", "memory×", "gradients");
    for (std::size_t i = 0; i < results.size(); ++i)
        std::printf("%-10s %10.1f %8.2f %14.1f %8.2f %10s\n", policies[i], results[i].ms, results[i].ms / results[0].ms,
                    results[i].peak / 1e6, static_cast<double>(results[i].peak) / results[0].peak,
                    i == 0 ? "reference" : results[i].identical ? "bitwise =" : "DIFFER");
    return 0;
}
