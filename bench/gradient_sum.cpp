// The cross-rank gradient sum alone, without a model step around it (a benchmark, never a test):
// GPT-2 small's or deep's parameter shapes, gradients made up, summed by dist::GradientReducer
// (every gradient ready at once, as --gradient-sum after-backward does) and by
// dist::World::sum_in_rank_order tensor by tensor. Median of ROUNDS, per rank; for the reducer also
// the CPU time this rank's thread spent (copying and adding: the work overlap cannot remove when every
// core is computing), against the wall time:
//
//   mpirun --allow-run-as-root -np 2 build/bench/gradient_sum [small|deep] [ROUNDS]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/configs.hpp"
#include "remat/dist/gradient_reducer.hpp"
#include "remat/dist/world.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;

namespace {
double thread_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
    dist::World world;
    const std::string name = argc > 1 ? argv[1] : "small";
    const int rounds = argc > 2 ? std::stoi(argv[2]) : 5;
    const gpt2::Config config = name == "deep" ? bench::gpt2_config(24, 256, 8, 8192, 1024) : bench::gpt2_config(12, 768, 12, 50257, 1024);
    Generator init(1);
    auto model = gpt2::create(config, init);
    std::vector<Param*> params = tree::parameters(model);
    std::vector<Tensor> grads;
    std::size_t elements = 0;
    for (Param* p : params) {
        grads.push_back(full(p->value.shape(), 0.5f + static_cast<float>(world.rank())));
        elements += p->value.size();
    }
    dist::GradientReducer reducer(world, params);
    std::vector<double> bucketed, bucketed_cpu, per_tensor;
    using Clock = std::chrono::steady_clock;
    for (int r = 0; r < rounds; ++r) {
        world.barrier();
        auto start = Clock::now();
        const double cpu_start = thread_cpu_ms();
        for (std::size_t i = 0; i < params.size(); ++i) reducer.ready(i, &grads[i]);
        reducer.finish();
        bucketed_cpu.push_back(thread_cpu_ms() - cpu_start);
        bucketed.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e3);
        world.barrier();
        start = Clock::now();
        for (Tensor& g : grads) world.sum_in_rank_order(std::span<float>(g.data(), g.size()));
        per_tensor.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e3);
    }
    if (world.is_root())
        std::printf("%s: %zu ranks, %.1f MB of gradients in %zu buckets: GradientReducer %.1f ms (CPU %.1f ms), "
                    "sum_in_rank_order per tensor %.1f ms (median of %d)\n",
                    name.c_str(), world.size(), static_cast<double>(elements) * 4 / 1e6, reducer.bucket_count(),
                    median(bucketed), median(bucketed_cpu), median(per_tensor), rounds);
}
