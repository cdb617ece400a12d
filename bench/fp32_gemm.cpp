// fp32 products: OpenBLAS (what remat uses) against oneDNN's fp32 matmul, both cut into remat's bands
// on remat's pool (2 threads unless REMAT_NUM_THREADS says otherwise), on the products of a GPT-2
// small and a SmolLM-shaped training step: forward, input gradient and weight gradient of each
// projection and of the tied LM head, and TinyLlama-1.1B's LoRA step (forward and dX). issue 20 asked whether oneDNN's fp32 also wins.
//
//   build/bench/fp32_gemm [rounds]        prints GFLOP/s of each (best of `rounds`, default 20) and the ratio
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "src/ops/gemm.hpp"

using namespace remat::ops::detail;
using Clock = std::chrono::steady_clock;
using dims = dnnl::memory::dims;

namespace {
struct Shape {
    const char* what;
    bool ta, tb;
    std::size_t M, N, K;
};

// As remat's bf16 path runs oneDNN — one OpenMP thread per pool band, bands of whole rows — except
// that a transposed A is passed as it is stored (strides), which suits oneDNN's fp32 kernels.
void onednn_f32(const Shape& s, const float* A, const float* B, float* C) {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const std::size_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    const Bands bands = bands_for(s.M, s.N, s.K, true);
    for_each_band(bands, [&](std::size_t begin, std::size_t end) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(1);
        const auto d = [](std::size_t n) { return static_cast<dnnl::memory::dim>(n); };
        const std::size_t m = bands.by_rows ? end - begin : s.M, n = bands.by_rows ? s.N : end - begin;
        const dnnl::memory::desc a({d(m), d(s.K)}, dnnl::memory::data_type::f32, s.ta ? dims{1, d(lda)} : dims{d(lda), 1});
        const dnnl::memory::desc b({d(s.K), d(n)}, dnnl::memory::data_type::f32, s.tb ? dims{1, d(ldb)} : dims{d(ldb), 1});
        const dnnl::memory::desc c({d(m), d(n)}, dnnl::memory::data_type::f32, dims{d(s.N), 1});
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine);
        thread_local std::vector<std::uint8_t> scratch;
        scratch.resize(std::max(scratch.size(), pd.scratchpad_desc().get_size()));
        thread_local dnnl::stream stream(engine);
        const float* a0 = !bands.by_rows ? A : (s.ta ? A + begin : A + begin * lda);
        const float* b0 = bands.by_rows ? B : (s.tb ? B + begin * ldb : B + begin);
        float* c0 = bands.by_rows ? C + begin * s.N : C + begin;
        dnnl::matmul(pd).execute(stream, {{DNNL_ARG_SRC, dnnl::memory(a, engine, const_cast<float*>(a0))},
                                          {DNNL_ARG_WEIGHTS, dnnl::memory(b, engine, const_cast<float*>(b0))},
                                          {DNNL_ARG_DST, dnnl::memory(c, engine, c0)},
                                          {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), engine, scratch.data())}});
        stream.wait();
        omp_set_num_threads(saved);
    });
}

template <class F>
double best_ms(int rounds, F f) {
    double best = 1e30;
    for (int r = 0; r <= rounds; ++r) {  // the first builds kernels and touches memory
        const auto t0 = Clock::now();
        f();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (r > 0) best = std::min(best, ms);
    }
    return best;
}
// oneDNN with op(B) — the weight, in the products where it is B — reordered once into the layout its
// kernel prefers (what a frozen weight could keep between steps), then multiplied in bands of rows.
// Returns the timing of the products alone; nullopt where B is not a weight (dW) or bands are not rows.
std::optional<double> onednn_f32_packed(const Shape& s, const float* A, const float* B, float* C, int rounds) {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const Bands bands = bands_for(s.M, s.N, s.K, true);
    if (s.ta || !bands.by_rows) return std::nullopt;
    const auto d = [](std::size_t n) { return static_cast<dnnl::memory::dim>(n); };
    const std::size_t ldb = s.tb ? s.K : s.N;
    const dnnl::memory::desc b_plain({d(s.K), d(s.N)}, dnnl::memory::data_type::f32, s.tb ? dims{1, d(ldb)} : dims{d(ldb), 1});
    const dnnl::memory::desc b_any({d(s.K), d(s.N)}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto pd_for = [&](std::size_t m) {
        const dnnl::memory::desc a({d(m), d(s.K)}, dnnl::memory::data_type::f32, dims{d(s.K), 1});
        const dnnl::memory::desc c({d(m), d(s.N)}, dnnl::memory::data_type::f32, dims{d(s.N), 1});
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b_any, c), attr, engine);
    };
    const auto pd = pd_for(bands.step);
    if (pd_for(bands.extent - bands.step * (bands.count - 1)).weights_desc() != pd.weights_desc()) return std::nullopt;
    dnnl::memory packed(pd.weights_desc(), engine);
    dnnl::stream once(engine);
    dnnl::memory plain(b_plain, engine, const_cast<float*>(B));
    dnnl::reorder(plain, packed).execute(once, plain, packed);
    once.wait();
    return best_ms(rounds, [&] {
        for_each_band(bands, [&](std::size_t begin, std::size_t end) {
            const int saved = omp_get_max_threads();
            omp_set_num_threads(1);
            const auto band = end - begin == bands.step ? pd : pd_for(end - begin);
            thread_local std::vector<std::uint8_t> scratch;
            scratch.resize(std::max(scratch.size(), band.scratchpad_desc().get_size()));
            thread_local dnnl::stream stream(engine);
            dnnl::matmul(band).execute(
                stream, {{DNNL_ARG_SRC, dnnl::memory(band.src_desc(), engine, const_cast<float*>(A + begin * s.K))},
                         {DNNL_ARG_WEIGHTS, packed},
                         {DNNL_ARG_DST, dnnl::memory(band.dst_desc(), engine, C + begin * s.N)},
                         {DNNL_ARG_SCRATCHPAD, dnnl::memory(band.scratchpad_desc(), engine, scratch.data())}});
            stream.wait();
            omp_set_num_threads(saved);
        });
    });
}
}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    // Forward y = x·W (GPT-2's Conv1D: W (in, out)) or x·Wᵀ (Linear: W (out, in)); dX; dW.
    const Shape shapes[] = {
        {"small c_attn forward", false, false, 256, 2304, 768}, {"small c_attn dX", false, true, 256, 768, 2304},
        {"small c_attn dW", true, false, 768, 2304, 256},       {"small c_fc forward", false, false, 256, 3072, 768},
        {"small mlp c_proj forward", false, false, 256, 768, 3072}, {"small c_fc dW", true, false, 768, 3072, 256},
        {"small LM head forward", false, true, 256, 50257, 768}, {"small LM head dX", false, false, 256, 768, 50257},
        {"small LM head dW", true, false, 50257, 768, 256},      {"smollm q forward", false, true, 512, 576, 576},
        {"smollm k forward", false, true, 512, 192, 576},         {"smollm gate forward", false, true, 512, 1536, 576},
        {"smollm down dX", false, false, 512, 1536, 576},         {"smollm gate dW", true, false, 1536, 576, 512},
        {"smollm LM head forward", false, true, 512, 49152, 576},
        // TinyLlama-1.1B's (docs/lora.md): hidden 2048, intermediate 5632, 512 tokens
        {"tinyllama q forward", false, true, 512, 2048, 2048},    {"tinyllama gate forward", false, true, 512, 5632, 2048},
        {"tinyllama down forward", false, true, 512, 2048, 5632}, {"tinyllama q dX", false, false, 512, 2048, 2048},
        {"tinyllama gate dX", false, false, 512, 2048, 5632},     {"tinyllama down dX", false, false, 512, 5632, 2048},
        {"tinyllama gate dW", true, false, 5632, 2048, 512},      {"tinyllama down dW", true, false, 2048, 5632, 512},
    };
    std::printf("%-26s %14s %14s %8s %14s %8s\n", "product (M·N·K)", "OpenBLAS GF/s", "oneDNN GF/s", "oneDNN/BLAS",
                "packed GF/s", "packed/BLAS");
    double blas_total = 0, dnnl_total = 0;
    for (const Shape& s : shapes) {
        std::vector<float> A(s.M * s.K, 0.5f), B(s.K * s.N, 0.25f), C(s.M * s.N);
        const double flops = 2.0 * static_cast<double>(s.M * s.N * s.K);
        const double blas = best_ms(rounds, [&] { gemm(s.ta, s.tb, s.M, s.N, s.K, A.data(), B.data(), 0.0f, C.data()); });
        const double onednn = best_ms(rounds, [&] { onednn_f32(s, A.data(), B.data(), C.data()); });
        blas_total += blas;
        dnnl_total += onednn;
        const auto packed = onednn_f32_packed(s, A.data(), B.data(), C.data(), rounds);
        std::printf("%-26s %14.1f %14.1f %8.2f", s.what, flops / blas / 1e6, flops / onednn / 1e6, blas / onednn);
        if (packed) std::printf(" %14.1f %8.2f", flops / *packed / 1e6, blas / *packed);
        std::printf("\n");
    }
    std::printf("all of them: OpenBLAS %.2f ms, oneDNN %.2f ms (oneDNN %.2fx as fast)\n", blas_total, dnnl_total,
                blas_total / dnnl_total);
}
