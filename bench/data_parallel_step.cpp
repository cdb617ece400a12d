// Data-parallel GPT-2 steps (forward + backward of two micro-batches, dropout 0), for
// docs/distributed.md's table; a benchmark, never a test:
//
//   mpirun --allow-run-as-root -np 2 build/bench/data_parallel_step small|deep [ROUNDS] [BUCKET_MIB]
//       2 ranks x 1 thread, one micro-batch each. Every round runs three steps in turn, so that all
//       three see the same machine: the gradient sum left out (what the step costs without it; not a
//       way to train, the ranks' gradients then differ), summed after backward (the sum timed on its
//       own: the communication), and summed in buckets during backward (--gradient-sum's default).
//   build/bench/data_parallel_step small|deep [ROUNDS]
//       1 rank on all its threads, the two micro-batches accumulated (--accumulate 2).
//
// BUCKET_MIB: the sum's bucket size, as remat train's --bucket-size (default 4). Medians over ROUNDS
// (default 8; the first round left out). The share of the communication hidden behind backward is
// (step without the sum + communication − step with the overlapped sum) / communication. Each step
// starts at a barrier; the tokens are random ids drawn per micro-batch. A second line gives rank 0's
// CPU time, user and system, in each of the three: over a network the kernel's TCP work is system
// time on the rank's own core, which overlap cannot hide when every core computes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "bench/configs.hpp"
#include "remat/ad/tape.hpp"
#include "remat/dist/gradient_reducer.hpp"
#include "remat/dist/world.hpp"
#include "remat/train/micro_batches.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;
using Clock = std::chrono::steady_clock;

namespace {
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// This process's CPU time so far, ms.
struct Cpu {
    double user = 0, system = 0;
};
Cpu cpu_now() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto ms = [](timeval t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
    return {ms(u.ru_utime), ms(u.ru_stime)};
}

// The CPU time of one kind of step (or phase), round by round.
struct CpuSpent {
    std::vector<double> user, system;
    void add_since(Cpu from) {
        const Cpu now = cpu_now();
        user.push_back(now.user - from.user);
        system.push_back(now.system - from.system);
    }
};

double median(std::vector<double> v) {
    if (v.size() > 1) v.erase(v.begin());  // the first round warms up
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

IdTensor random_ids(std::size_t B, std::size_t T, std::size_t V, std::uint64_t seed) {
    IdTensor ids = IdTensor::from_shape({B, T});
    Generator g(seed);
    std::vector<std::uint32_t> bits(ids.size());
    g.fill_bits(bits.data(), bits.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>(bits[i] % V);
    return ids;
}
}  // namespace

int main(int argc, char** argv) {
    dist::World world;
    const std::string name = argc > 1 ? argv[1] : "small";
    const int rounds = argc > 2 ? std::stoi(argv[2]) : 8;
    const double bucket_mib = argc > 3 ? std::stod(argv[3]) : 4;
    const bool deep = name == "deep";
    const std::size_t T = deep ? 256 : 128, B = deep ? 4 : 2, V = deep ? 8192 : 50257;
    Generator init(1);
    auto model = gpt2::create(deep ? bench::gpt2_config(24, 256, 8, V, 1024) : bench::gpt2_config(12, 768, 12, V, 1024), init);
    const std::vector<Param*> params = tree::parameters(model);
    const std::size_t N = world.size(), per_rank = N == 1 ? 2 : 1;  // two micro-batches a step in all
    std::vector<IdTensor> batches;
    for (std::size_t j = 0; j < per_rank; ++j) batches.push_back(random_ids(B, T, V, 100 + world.rank() * per_rank + j));

    ad::Tape tape;
    train::MicroBatches micro(params);
    dist::GradientReducer reducer(world, params, static_cast<std::size_t>(bucket_mib * (1 << 20)));
    // The first progress call comes after backward's first op: the overlap's window opens there.
    std::optional<Clock::time_point> backward_start;
    const train::GradientWatch watch{.final = [&](std::size_t i, Tensor* g) { reducer.ready(i, g); },
                                     .final_except_rows = [&](std::size_t i, Tensor* g, std::span<const std::int64_t> rows) {
                                         reducer.ready_except_rows(i, g, rows);
                                     },
                                     .progress = [&] {
                                         if (!backward_start) backward_start = Clock::now();
                                         reducer.progress();
                                     }};
    auto loss = [&](std::size_t j) { return model.loss(model(batches[j]), batches[j]); };

    std::vector<double> without, after, after_backward, communication, during, during_backward, forward, waiting;
    CpuSpent without_cpu, communication_cpu, during_cpu;
    for (int r = 0; r < rounds; ++r) {
        world.barrier();
        auto start = Clock::now();
        Cpu cpu = cpu_now();
        train::StepGradient g = micro.run(tape, per_rank, loss, 2);
        without.push_back(ms_since(start));
        without_cpu.add_since(cpu);
        if (N == 1) continue;

        world.barrier();
        start = Clock::now();
        g = micro.run(tape, per_rank, loss, 2);
        const auto sum_start = Clock::now();
        cpu = cpu_now();
        after_backward.push_back(ms_since(start));
        for (std::size_t i = 0; i < params.size(); ++i) reducer.ready(i, g.grads[i]);
        g.grads = reducer.finish();
        communication.push_back(ms_since(sum_start));
        communication_cpu.add_since(cpu);
        after.push_back(ms_since(start));

        world.barrier();
        backward_start.reset();
        start = Clock::now();
        cpu = cpu_now();
        g = micro.run(tape, per_rank, loss, 2, &watch);
        during_backward.push_back(ms_since(start));
        g.grads = reducer.finish();
        during.push_back(ms_since(start));
        during_cpu.add_since(cpu);
        forward.push_back(std::chrono::duration<double, std::milli>(*backward_start - start).count());
        waiting.push_back(reducer.last_wait_seconds() * 1e3);
    }
    if (!world.is_root()) return 0;
    if (N == 1) {
        std::printf("%s: 1 rank, 2 micro-batches accumulated: %.0f ms/step (median of %d)\n", name.c_str(), median(without), rounds - 1);
        return 0;
    }
    const double none = median(without), comm = median(communication), with_sum = median(during);
    std::printf("%s: %zu ranks, %zu buckets: without the sum %.0f ms/step; summed after backward %.0f ms/step, of which "
                "communication %.1f ms (backward from %.0f to %.0f ms); summed during backward %.0f ms/step (backward from %.0f to %.0f ms, "
                "then waiting %.1f ms); hidden %.0f %% (median of %d)\n",
                name.c_str(), N, reducer.bucket_count(), none, median(after), comm, median(forward), median(after_backward), with_sum,
                median(forward), median(during_backward), median(waiting),
                100 * (none + comm - with_sum) / comm, rounds - 1);
    auto cpu = [](const CpuSpent& c) { return std::to_string(std::lround(median(c.user))) + " + " + std::to_string(std::lround(median(c.system))); };
    std::printf("%s: rank 0's CPU, user + system ms: without the sum %s; communication after backward %s; summed during backward %s\n",
                name.c_str(), cpu(without_cpu).c_str(), cpu(communication_cpu).c_str(), cpu(during_cpu).c_str());
}
