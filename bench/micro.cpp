// Micro-benchmarks of remat's kernels against raw OpenBLAS and memcpy.
//
//   build/bench/micro           full run (~12 s on 2 cores)
//   build/bench/micro --quick   fewer repetitions (~3 s)
//   build/bench/micro --attention   only the attention table
//
// Every measurement is a median over repetitions taken round-robin (library, raw, library, raw, …)
// after a warm-up, so frequency drift and noisy neighbours hit all variants alike.
#include <cblas.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "remat/ad/backend.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/random.hpp"
#include "remat/ops/activation.hpp"
#include "remat/ops/attention.hpp"
#include "remat/ops/elementwise.hpp"
#include "remat/ops/linalg.hpp"
#include "remat/ops/norm.hpp"
#include "remat/ops/shape.hpp"
#include "remat/ops/softmax.hpp"
#include "remat/ops/threads.hpp"

using namespace remat;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
    int warmup = 3;
    int reps = 31;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class F>
double seconds(F&& f) {
    const auto t0 = Clock::now();
    f();
    const auto t1 = Clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
}

struct Stats {
    double median = 0, q1 = 0, q3 = 0;
    double spread() const { return (q3 - q1) / median; }  // interquartile range relative to the median
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {median(v), at(0.25), at(0.75)};
}

// Runs the variants round-robin (v0 v1 … v0 v1 …) after `warmup` rounds; the seconds of every run.
std::vector<std::vector<double>> round_robin(const std::vector<std::function<void()>>& variants,
                                             const Config& cfg) {
    for (int w = 0; w < cfg.warmup; ++w)
        for (const auto& f : variants) f();
    std::vector<std::vector<double>> times(variants.size());
    for (int r = 0; r < cfg.reps; ++r)
        for (std::size_t i = 0; i < variants.size(); ++i) times[i].push_back(seconds(variants[i]));
    return times;
}

// Median seconds of each variant.
std::vector<double> medians(const std::vector<std::vector<double>>& times) {
    std::vector<double> m;
    for (const auto& t : times) m.push_back(median(t));
    return m;
}

// Minor page faults per call of f (averaged over n calls).
double faults_per_call(const std::function<void()>& f, int n = 8) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    for (int i = 0; i < n; ++i) f();
    getrusage(RUSAGE_SELF, &after);
    return static_cast<double>(after.ru_minflt - before.ru_minflt) / n;
}

Tensor random_tensor(const Shape& shape, std::uint64_t seed) {
    Tensor t = empty(shape);
    Generator(seed).fill_normal(t.data(), t.size());
    return t;
}

std::shared_ptr<const Tensor> shared_random(const Shape& shape, std::uint64_t seed) {
    return std::make_shared<const Tensor>(random_tensor(shape, seed));
}

// A 0-d "loss" whose pullback adds a fixed, precomputed dy into y's gradient: it seeds backward with
// a realistic upstream gradient without any reduction kernel in the way. Its cost inside the tape is
// a zero-filled (y-shaped) gradient buffer plus one add pass; measured separately as "dy seed".
Var seed(const Var& y, std::shared_ptr<const Tensor> dy) {
    return ad::record(ad::OpKind::loss, std::make_shared<const Tensor>(zeros(Shape{})), {y},
                      [dy](const Tensor&, ad::Grads& g) {
                          if (!g.wants(0)) return;
                          float* d = g[0].data();
                          const float* s = dy->data();
                          for (std::size_t i = 0, n = dy->size(); i < n; ++i) d[i] += s[i];
                      });
}

// What the tape spends on seed(): allocate + zero a y-shaped buffer, add dy into it, free it.
void seed_cost(const Tensor& dy) {
    Tensor g = zeros(dy.shape());
    float* d = g.data();
    const float* s = dy.data();
    for (std::size_t i = 0, n = dy.size(); i < n; ++i) d[i] += s[i];
    asm volatile("" : : "r"(d) : "memory");
}

// OpenBLAS on every core, as a plain BLAS user runs it (remat sets OpenBLAS to one thread while
// its own pool splits the GEMMs into bands: remat/ops/threads.hpp).
void raw_sgemm(bool ta, bool tb, int M, int N, int K, const float* A, const float* B, float beta, float* C) {
    const int threads = openblas_get_num_threads();
    openblas_set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A,
                ta ? M : K, B, tb ? K : N, beta, C, N);
    openblas_set_num_threads(threads);
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    return "unknown";
}

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

std::string shape_str(const Shape& s) {
    std::string out;
    for (std::size_t d : s) {
        out += out.empty() ? '(' : ',';
        out += std::to_string(d);
    }
    out += ')';
    return out;
}

void rule(int width) {
    std::printf("%s\n", std::string(static_cast<std::size_t>(width), '-').c_str());
}

// ---------------------------------------------------------------------------------------------------
// 1 + 2. Matrix products.

struct GemmShape {
    int K, N;
};
constexpr int kRows = 256;

void bench_matmul(const Config& cfg) {
    const GemmShape shapes[] = {{768, 768}, {768, 3072}, {3072, 768}};
    const int W = 136;

    std::printf("\n[1] GEMM forward, GFLOP/s (2·M·K·N / median time)\n");
    std::printf("    Shape \"KxNx256\" read as activation (M=256, K) · weight (K, N) -> (256, N): sgemm M=256, K, N.\n");
    std::printf("    raw      = cblas_sgemm into a preallocated output (beta = 0)\n");
    std::printf("    matmul   = ops::matmul(Var, Var) under ad::NoGrad (allocates its output each call)\n");
    std::printf("    linear   = ops::linear(x, W, {}, in_out) under NoGrad; linear+b adds a bias (768/3072,)\n");
    std::printf("    raw+new  = cblas_sgemm into a freshly allocated remat::empty() output each call (diagnostic)\n");
    std::printf("    x/raw    = raw median time / variant median time (100%% = as fast as raw sgemm)\n");
    std::printf("    IQR      = interquartile range of the run times / median: the measurement noise\n");
    std::printf("    flt      = minor page faults per call (getrusage), library matmul and raw\n");
    rule(W);
    std::printf("%-14s %7s %7s %7s %8s %8s %7s %7s %7s %9s %7s %7s %6s %6s\n", "GEMM M,K,N", "raw", "matmul",
                "linear", "linear+b", "raw+new", "mm/raw", "lin/raw", "lin+b/r", "raw+new/r", "IQR raw", "IQR mm",
                "flt mm", "flt raw");
    rule(W);
    for (const auto& [K, N] : shapes) {
        const int M = kRows;
        const double flops = 2.0 * M * K * N;
        auto A = shared_random(Shape{std::size_t(M), std::size_t(K)}, 1);
        auto B = shared_random(Shape{std::size_t(K), std::size_t(N)}, 2);
        auto bias = shared_random(Shape{std::size_t(N)}, 3);
        Tensor C = zeros(Shape{std::size_t(M), std::size_t(N)});
        const Var a(A), b(B), vb(bias), none;

        auto raw = [&] { raw_sgemm(false, false, M, N, K, A->data(), B->data(), 0.0f, C.data()); };
        auto lib = [&] {
            ad::NoGrad ng;
            Var c = ops::matmul(a, b);
            asm volatile("" : : "r"(c.value().data()) : "memory");
        };
        auto lin = [&] {
            ad::NoGrad ng;
            Var c = ops::linear(a, b, none, ops::WeightLayout::in_out);
            asm volatile("" : : "r"(c.value().data()) : "memory");
        };
        auto linb = [&] {
            ad::NoGrad ng;
            Var c = ops::linear(a, b, vb, ops::WeightLayout::in_out);
            asm volatile("" : : "r"(c.value().data()) : "memory");
        };
        const Shape c_shape = C.shape();
        auto raw_new = [&] {
            Tensor out = empty(c_shape);
            raw_sgemm(false, false, M, N, K, A->data(), B->data(), 0.0f, out.data());
            asm volatile("" : : "r"(out.data()) : "memory");
        };
        auto runs = round_robin({lib, raw, lin, raw, linb, raw, raw_new, raw}, cfg);
        std::vector<double> raw_runs;  // every raw run, pooled: raw alternates with each library variant
        for (int i : {1, 3, 5, 7}) raw_runs.insert(raw_runs.end(), runs[i].begin(), runs[i].end());
        const Stats raw_stats = stats(raw_runs), mm_stats = stats(runs[0]);
        const auto t = medians(runs);
        const double t_raw = raw_stats.median;
        const double f_mm = faults_per_call(lib), f_raw = faults_per_call(raw);
        char name[32];
        std::snprintf(name, sizeof name, "%d,%d,%d", M, K, N);
        std::printf("%-14s %7.1f %7.1f %7.1f %8.1f %8.1f %6.1f%% %6.1f%% %6.1f%% %8.1f%% %6.1f%% %6.1f%% %6.1f %7.1f\n",
                    name, flops / t_raw * 1e-9, flops / t[0] * 1e-9, flops / t[2] * 1e-9, flops / t[4] * 1e-9,
                    flops / t[6] * 1e-9, 100 * t_raw / t[0], 100 * t_raw / t[2], 100 * t_raw / t[4],
                    100 * t_raw / t[6], 100 * raw_stats.spread(), 100 * mm_stats.spread(), f_mm, f_raw);
    }
    rule(W);

    std::printf("\n[2] GEMM forward+backward through the tape, GFLOP/s (3 × 2·M·K·N / median time)\n");
    std::printf("    raw  = C = A·W; dA += dC·Wᵀ; dW += Aᵀ·dC (three cblas_sgemm, preallocated buffers)\n");
    std::printf("    tape = leaf A, W; C = ops::matmul(A, W); seed dC; default_tape().backward()\n");
    std::printf("           (leaf gradients persist and accumulate, as the raw dA, dW do; dC's buffer is fresh)\n");
    std::printf("    seed ms    = the harness's share of 'tape' (zero-filled dC buffer + adding dC into it)\n");
    std::printf("    excl. seed = raw time / (tape time - seed time)\n");
    const int W2 = 99;
    rule(W2);
    std::printf("%-16s %10s %10s %8s %12s %12s %10s %12s\n", "GEMM M,K,N", "raw", "tape", "tape/raw", "raw ms",
                "tape ms", "seed ms", "excl. seed");
    rule(W2);
    auto& tape = ad::default_tape();
    for (const auto& [K, N] : shapes) {
        const int M = kRows;
        const double flops = 3 * 2.0 * M * K * N;
        Tensor A = random_tensor(Shape{std::size_t(M), std::size_t(K)}, 1);
        Tensor B = random_tensor(Shape{std::size_t(K), std::size_t(N)}, 2);
        auto dC = shared_random(Shape{std::size_t(M), std::size_t(N)}, 4);
        Tensor C = zeros(Shape{std::size_t(M), std::size_t(N)});
        Tensor dA = zeros(A.shape()), dB = zeros(B.shape());
        auto raw = [&] {
            raw_sgemm(false, false, M, N, K, A.data(), B.data(), 0.0f, C.data());
            raw_sgemm(false, true, M, K, N, dC->data(), B.data(), 1.0f, dA.data());
            raw_sgemm(true, false, K, N, M, A.data(), dC->data(), 1.0f, dB.data());
        };
        auto lib = [&] {
            Var a = ad::leaf(A), b = ad::leaf(B);
            Var c = ops::matmul(a, b);
            tape.backward(seed(c, dC));
        };
        auto sc = [&] { seed_cost(*dC); };
        const auto t = medians(round_robin({lib, raw, sc}, cfg));
        char name[32];
        std::snprintf(name, sizeof name, "%d,%d,%d", M, K, N);
        std::printf("%-16s %10.1f %10.1f %7.1f%% %12.3f %12.3f %10.3f %11.1f%%\n", name, flops / t[1] * 1e-9,
                    flops / t[0] * 1e-9, 100 * t[1] / t[0], t[1] * 1e3, t[0] * 1e3, t[2] * 1e3,
                    100 * t[1] / (t[0] - t[2]));
        tape.clear_grads();
    }
    rule(W2);
}

// ---------------------------------------------------------------------------------------------------
// 3. Memory-bound kernels.

struct MemCase {
    std::string name;
    Shape shape;
    double fwd_bytes, bwd_bytes;  // ideal traffic: inputs read + outputs written
    std::function<void()> forward;           // under NoGrad
    std::function<void()> forward_backward;  // recorded, seeded, backward()
    std::shared_ptr<const Tensor> dy;        // the seed, for the seed-cost reference
    std::size_t copy_elems;                  // memcpy reference of this many floats
};

void bench_memory(const Config& cfg) {
    auto& tape = ad::default_tape();
    constexpr std::size_t rows = 8 * 256, C = 768, F = 3072;
    constexpr double f4 = 4.0;  // bytes per float

    // Long-lived inputs (tape leaves borrow them by address).
    Tensor x_ln = random_tensor(Shape{rows, C}, 10), gamma = random_tensor(Shape{C}, 11),
           beta = random_tensor(Shape{C}, 12);
    Tensor scores = random_tensor(Shape{4, 12, 256, 256}, 13);
    Tensor x_gelu = random_tensor(Shape{rows, F}, 14);
    Tensor x_add = random_tensor(Shape{rows, C}, 15), y_add = random_tensor(Shape{rows, C}, 16),
           b_add = random_tensor(Shape{C}, 17);
    auto dy_ln = shared_random(Shape{rows, C}, 20);
    auto dy_sm = shared_random(scores.shape(), 21);
    auto dy_gelu = shared_random(Shape{rows, F}, 22);
    auto sink = [](const Var& v) { asm volatile("" : : "r"(v.value().data()) : "memory"); };

    std::vector<MemCase> cases;
    {
        const double n = rows * C;
        cases.push_back({"layer_norm", x_ln.shape(),
                         // fwd: x, gamma, beta read; y written.  bwd: x, dy, gamma read; dx, dgamma, dbeta written
                         f4 * (2 * n + 2 * C), f4 * (3 * n + 3 * C),
                         [&] {
                             ad::NoGrad ng;
                             sink(ops::layer_norm(Var(std::shared_ptr<const Tensor>(&x_ln, [](auto*) {})),
                                                  Var(std::shared_ptr<const Tensor>(&gamma, [](auto*) {})),
                                                  Var(std::shared_ptr<const Tensor>(&beta, [](auto*) {})), 1e-5f));
                         },
                         [&] {
                             Var y = ops::layer_norm(ad::leaf(x_ln), ad::leaf(gamma), ad::leaf(beta), 1e-5f);
                             tape.backward(seed(y, dy_ln));
                         },
                         dy_ln, rows * C});
    }
    {
        const double n = static_cast<double>(scores.size());
        cases.push_back({"softmax causal", scores.shape(),
                         // fwd: x read, y written.  bwd: y, dy read; dx written
                         f4 * 2 * n, f4 * 3 * n,
                         [&] {
                             ad::NoGrad ng;
                             sink(ops::softmax(ad::leaf(scores), {.causal = true}));
                         },
                         [&] {
                             Var y = ops::softmax(ad::leaf(scores), {.causal = true});
                             tape.backward(seed(y, dy_sm));
                         },
                         dy_sm, scores.size()});
    }
    {
        const double n = rows * F;
        cases.push_back({"gelu_tanh", x_gelu.shape(),
                         // fwd: x read, y written.  bwd: x, dy read; dx written
                         f4 * 2 * n, f4 * 3 * n,
                         [&] {
                             ad::NoGrad ng;
                             sink(ops::gelu_tanh(ad::leaf(x_gelu)));
                         },
                         [&] {
                             Var y = ops::gelu_tanh(ad::leaf(x_gelu));
                             tape.backward(seed(y, dy_gelu));
                         },
                         dy_gelu, rows * F});
    }
    {
        const double n = rows * C;
        cases.push_back({"add same-shape", x_add.shape(),
                         // fwd: a, b read, y written.  bwd: dy read; da, db written
                         f4 * 3 * n, f4 * 3 * n,
                         [&] {
                             ad::NoGrad ng;
                             sink(ops::add(ad::leaf(x_add), ad::leaf(y_add)));
                         },
                         [&] {
                             Var y = ops::add(ad::leaf(x_add), ad::leaf(y_add));
                             tape.backward(seed(y, dy_ln));
                         },
                         dy_ln, rows * C});
        cases.push_back({"add bias bcast", x_add.shape(),
                         // fwd: a, b (C,) read, y written.  bwd: dy read; da, db (C,) written
                         f4 * (2 * n + C), f4 * (2 * n + C),
                         [&] {
                             ad::NoGrad ng;
                             sink(ops::add(ad::leaf(x_add), ad::leaf(b_add)));
                         },
                         [&] {
                             Var y = ops::add(ad::leaf(x_add), ad::leaf(b_add));
                             tape.backward(seed(y, dy_ln));
                         },
                         dy_ln, rows * C});
    }

    std::printf("\n[3] Memory-bound kernels, GB/s = ideal bytes / median time (1 GB = 1e9 B)\n");
    std::printf("    ideal bytes: fwd = inputs read + outputs written; bwd = (inputs + dy) read + grads written\n");
    std::printf("    fwd       = op under NoGrad (includes allocating its output)\n");
    std::printf("    fwd+bwd   = recorded op + backward(); leaf grads persist (no zero-fill for dx); the time\n");
    std::printf("                of the harness's dy seed (zeros + add, column 'seed ms') is subtracted\n");
    std::printf("    memcpy    = std::memcpy of one tensor of the same size (read + write), a bandwidth roof\n");
    std::printf("    flt       = minor page faults per call (getrusage)\n");
    const int W = 131;
    rule(W);
    std::printf("%-15s %-15s %7s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "kernel", "shape", "MB fwd", "fwd ms",
                "fwd GB/s", "f+b ms", "f+b GB/s", "seed ms", "memcpy", "fwd/mcpy", "flt fwd", "flt f+b");
    rule(W);
    for (auto& c : cases) {
        std::vector<float> src(c.copy_elems, 1.0f), dst(c.copy_elems, 0.0f);
        auto copy = [&] {
            std::memcpy(dst.data(), src.data(), c.copy_elems * sizeof(float));
            asm volatile("" : : "r"(dst.data()) : "memory");
        };
        auto sc = [&] { seed_cost(*c.dy); };
        const auto t = medians(round_robin({c.forward, c.forward_backward, sc, copy}, cfg));
        const double flt_f = faults_per_call(c.forward, 4), flt_fb = faults_per_call(c.forward_backward, 4);
        tape.clear_grads();
        const double fb = std::max(t[1] - t[2], 1e-9);
        const double copy_gbs = 2.0 * c.copy_elems * sizeof(float) / t[3] * 1e-9;
        const double fwd_gbs = c.fwd_bytes / t[0] * 1e-9;
        std::printf("%-15s %-15s %7.1f %8.3f %8.1f %8.3f %8.1f %8.3f %8.1f %7.0f%% %8.0f %8.0f\n", c.name.c_str(),
                    shape_str(c.shape).c_str(), c.fwd_bytes * 1e-6, t[0] * 1e3, fwd_gbs, fb * 1e3,
                    (c.fwd_bytes + c.bwd_bytes) / fb * 1e-9, t[2] * 1e3, copy_gbs, 100 * fwd_gbs / copy_gbs, flt_f,
                    flt_fb);
    }
    rule(W);
}

// ---------------------------------------------------------------------------------------------------
// 4. Attention: the fused op against the same attention composed of the unfused ops.

// split → per-head permutes → q·kᵀ → scale → causal softmax → ·v → merge: what the layer did before
// the fused op.
Var composed_attention(const Var& qkv, std::size_t H) {
    const auto B = static_cast<std::int64_t>(qkv.shape()[0]), T = static_cast<std::int64_t>(qkv.shape()[1]);
    const auto C = static_cast<std::int64_t>(qkv.shape()[2] / 3), h = static_cast<std::int64_t>(H), D = C / h;
    auto parts = ops::split_last(qkv, {std::size_t(C), std::size_t(C), std::size_t(C)});
    auto heads = [&](const Var& x) { return ops::permute(ops::reshape(x, {B, T, h, D}), {0, 2, 1, 3}); };
    Var s = ops::scale(ops::matmul(heads(parts[0]), heads(parts[1]), false, true), 1.0f / std::sqrt(float(D)));
    Var y = ops::matmul(ops::softmax(s, {.causal = true}), heads(parts[2]));
    return ops::reshape(ops::permute(y, {0, 2, 1, 3}), {B, T, C});
}

void bench_attention(const Config& cfg) {
    auto& tape = ad::default_tape();
    struct Shape4 {
        const char* name;
        std::size_t B, T, C, H;
    };
    const Shape4 shapes[] = {{"deep layer", 4, 256, 256, 8}, {"small layer", 2, 128, 768, 12}, {"tiny layer", 4, 64, 128, 4}};
    std::printf("\n[4] Causal self-attention from packed qkv (B, T, 3C): fused op vs composed ops, ms (median)\n");
    std::printf("    composed = split, head permutes, matmul q·kᵀ, scale, softmax, matmul ·v, merge (the layer before)\n");
    std::printf("    fused    = ops::attention(qkv, H, causal); 'fused 1T' with ops::set_num_threads(1)\n");
    std::printf("    f+b      = recorded forward + backward() from a fixed dy (the seed's cost not subtracted)\n");
    const int W = 112;
    rule(W);
    std::printf("%-12s %-16s %10s %10s %10s %11s %11s %11s %9s\n", "shape", "(B,T,C,H)", "comp fwd", "fused fwd",
                "fused 1T", "comp f+b", "fused f+b", "f+b 1T", "comp/fus");
    rule(W);
    const std::size_t threads = ops::num_threads();
    for (const Shape4& s : shapes) {
        Tensor qkv = random_tensor(Shape{s.B, s.T, 3 * s.C}, 30);
        auto dy = shared_random(Shape{s.B, s.T, s.C}, 31);
        auto sink = [](const Var& v) { asm volatile("" : : "r"(v.value().data()) : "memory"); };
        auto comp_f = [&] {
            ad::NoGrad ng;
            sink(composed_attention(ad::leaf(qkv), s.H));
        };
        auto fused_f = [&] {
            ad::NoGrad ng;
            sink(ops::attention(ad::leaf(qkv), s.H, {.causal = true}));
        };
        auto comp_fb = [&] { tape.backward(seed(composed_attention(ad::leaf(qkv), s.H), dy)); };
        auto fused_fb = [&] { tape.backward(seed(ops::attention(ad::leaf(qkv), s.H, {.causal = true}), dy)); };
        const auto t = medians(round_robin({comp_f, fused_f, comp_fb, fused_fb}, cfg));
        ops::set_num_threads(1);
        const auto t1 = medians(round_robin({fused_f, fused_fb}, cfg));
        ops::set_num_threads(threads);
        tape.clear_grads();
        char dims[64];
        std::snprintf(dims, sizeof dims, "(%zu,%zu,%zu,%zu)", s.B, s.T, s.C, s.H);
        std::printf("%-12s %-16s %10.3f %10.3f %10.3f %11.3f %11.3f %11.3f %8.2fx\n", s.name, dims, t[0] * 1e3,
                    t[1] * 1e3, t1[0] * 1e3, t[2] * 1e3, t[3] * 1e3, t1[1] * 1e3, t[2] / t[3]);
    }
    rule(W);
}

}  // namespace

int main(int argc, char** argv) {
    Config cfg;
    bool only_attention = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            cfg.warmup = 1;
            cfg.reps = 5;
        } else if (std::strcmp(argv[i], "--attention") == 0) {
            only_attention = true;
        } else {
            std::fprintf(stderr, "usage: %s [--quick] [--attention]\n", argv[0]);
            return 2;
        }
    }
    std::printf("remat micro-benchmarks%s\n", cfg.reps < 10 ? " (--quick)" : "");
    std::printf("CPU              : %s\n", cpu_model().c_str());
    std::printf("OpenBLAS         : %s (core %s), %d threads (openblas_get_num_threads; 'raw' runs on all cores)\n",
                openblas_get_config(), openblas_get_corename(), openblas_get_num_threads());
    std::printf("hardware threads : %u, load average %s (other processes skew the timings)\n",
                std::thread::hardware_concurrency(), load_average().c_str());
    std::printf("timing           : std::chrono::steady_clock, median of %d reps after %d warm-up rounds, "
                "variants interleaved\n",
                cfg.reps, cfg.warmup);
    std::printf("remat threads    : %zu (ops::num_threads: fused attention, layer norm, GELU, …)\n", ops::num_threads());
    if (!only_attention) {
        bench_matmul(cfg);
        bench_memory(cfg);
    }
    bench_attention(cfg);
    return 0;
}
