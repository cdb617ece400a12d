// Read-only memory bandwidth, STREAM-style: the ceiling for batch-1 decoding, where every new token reads
// every weight once (decode tokens/s <= bandwidth / weight bytes; issue 19).
//
//     build/bench/read_bandwidth [GiB]      (default 2)
//
// A buffer of GiB gibibytes of floats, far larger than any cache, is written once (so that page faults and
// zero-page mappings stay out of the timings), then summed by 1 thread and by 2 threads (each a contiguous
// half), best of 5 repeats each. One JSON line per thread count:
//     {"threads": n, "gb_per_s": x, "bytes": b, "repeats": 5}      (GB = 1e9 bytes)
// Every sum is checked against the exact value, so the compiler cannot drop the reads and a wrong split
// cannot pass unnoticed. Run it on an idle machine: another process's memory traffic shares the bandwidth.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kRepeats = 5;

// Independent partial sums: one accumulator would serialise every add on the FP-add latency (4 cycles),
// far below what memory delivers; 64 lanes are 4 AVX-512 or 8 AVX2 or 16 SSE registers of independent adds.
// A lane sums at most 2^24 ones (a 4 GiB buffer on one thread), which float still counts exactly: hence
// the 4 GiB cap below and an exact check of the sum.
constexpr std::size_t kLanes = 64;

double sum(const float* p, std::size_t n) {
    float acc[kLanes] = {};
    std::size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (std::size_t j = 0; j < kLanes; ++j) acc[j] += p[i + j];
    for (; i < n; ++i) acc[i % kLanes] += p[i];
    double s = 0.0;  // lane totals pass 2^24 together: float would round them
    for (float a : acc) s += a;
    return s;
}

// Splits [0, n) into `threads` contiguous parts and runs f(begin, end, part) on a thread per part.
template <class F>
void split(std::size_t n, int threads, F f) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back(f, n * t / threads, n * (t + 1) / threads, t);
    for (auto& th : pool) th.join();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    double gib = 2.0;
    if (argc > 2 || (argc == 2 && ((gib = std::atof(argv[1])) <= 0.0 || gib > 4.0))) {
        std::fprintf(stderr, "usage: read_bandwidth [GiB]   (a buffer size in (0, 4], default 2)\n");
        return 2;
    }
    const auto requested = static_cast<std::size_t>(gib * double(std::size_t{1} << 30));
    const std::size_t n = requested / sizeof(float) / kLanes * kLanes;
    const std::size_t bytes = n * sizeof(float);
    std::unique_ptr<float, decltype(&std::free)> buffer(static_cast<float*>(std::aligned_alloc(64, bytes)), &std::free);
    if (!buffer) {
        std::fprintf(stderr, "error: cannot allocate %zu bytes\n", bytes);
        return 1;
    }
    float* data = buffer.get();
    split(n, 2, [data](std::size_t b, std::size_t e, int) { std::fill(data + b, data + e, 1.0f); });

    for (int threads : {1, 2}) {
        double best = 1e30;
        for (int r = 0; r < kRepeats; ++r) {
            std::vector<double> partial(threads);
            const auto t0 = std::chrono::steady_clock::now();
            split(n, threads, [&](std::size_t b, std::size_t e, int t) { partial[t] = sum(data + b, e - b); });
            best = std::min(best, seconds_since(t0));
            double total = 0.0;
            for (double s : partial) total += s;
            if (total != double(n)) {
                std::fprintf(stderr, "error: the sum of %zu ones came out as %.17g\n", n, total);
                return 1;
            }
        }
        std::printf("{\"threads\": %d, \"gb_per_s\": %.2f, \"bytes\": %zu, \"repeats\": %d}\n", threads,
                    double(bytes) / best / 1e9, bytes, kRepeats);
        std::fflush(stdout);
    }
    return 0;
}
