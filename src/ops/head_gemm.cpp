#include "head_gemm.hpp"

#include "kernels.hpp"

namespace remat::ops::detail {

namespace {

// A register tile of R rows × 16·NV columns in GCC vector types: one AVX-512 register per 16 floats
// in the x86-64-v4 clone, two AVX2 or four SSE registers in the others.
typedef float f16v __attribute__((vector_size(64)));
// The same type for unaligned loads and stores from float arrays (as the intrinsics' __m512_u).
typedef float f16v_u __attribute__((vector_size(64), aligned(4), may_alias));

#define REMAT_LOAD16(p) (*reinterpret_cast<const f16v_u*>(p))
#define REMAT_STORE16(p, v) (*reinterpret_cast<f16v_u*>(p) = (v))

// C[r, n] (r < R, n < 16·NV, row stride ldc) = alpha·Σ_k A(r, k)·B[k, n], or C += that.
template <std::size_t R, std::size_t NV>
[[gnu::always_inline]] inline void tile(std::size_t K, Left A, const float* B, std::size_t ldb, float* C,
                                        std::size_t ldc, float alpha, bool accumulate) {
    f16v acc[R][NV];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = f16v{};
    for (std::size_t k = 0; k < K; ++k) {
        f16v b[NV];
#pragma GCC unroll 16
        for (std::size_t v = 0; v < NV; ++v) b[v] = REMAT_LOAD16(B + k * ldb + 16 * v);
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            const float a = A.p[r * A.ar + k * A.ak];
#pragma GCC unroll 16
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] += a * b[v];
        }
    }
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (std::size_t v = 0; v < NV; ++v) {
            float* c = C + r * ldc + 16 * v;
            REMAT_STORE16(c, accumulate ? REMAT_LOAD16(c) + acc[r][v] * alpha : acc[r][v] * alpha);
        }
}

#undef REMAT_LOAD16
#undef REMAT_STORE16

// Columns [0, W), W < 16: the same running sums, one element at a time.
[[gnu::always_inline]] inline void narrow(std::size_t M, std::size_t W, std::size_t K, Left A, const float* B,
                                          std::size_t ldb, float* C, std::size_t ldc, float alpha, bool accumulate) {
    for (std::size_t r = 0; r < M; ++r)
        for (std::size_t n = 0; n < W; ++n) {
            float s = 0.0f;
            for (std::size_t k = 0; k < K; ++k) s += A.p[r * A.ar + k * A.ak] * B[k * ldb + n];
            float& c = C[r * ldc + n];
            c = accumulate ? c + s * alpha : s * alpha;
        }
}

// Rows in tiles of R (16 to 24 accumulators: enough independent FMA chains to hide their latency,
// few enough for AVX-512's 32 registers), the rest (fewer than 8) in tiles of 4, 2 and 1.
template <std::size_t NV>
[[gnu::always_inline]] inline void column_block(std::size_t M, std::size_t K, Left A, const float* B, std::size_t ldb,
                                                float* C, std::size_t ldc, float alpha, bool accumulate) {
    constexpr std::size_t R = NV >= 4 ? 6 : 8;
    std::size_t m = 0;
    for (; m + R <= M; m += R)
        tile<R, NV>(K, {A.p + m * A.ar, A.ar, A.ak}, B, ldb, C + m * ldc, ldc, alpha, accumulate);
    if (m + 4 <= M) tile<4, NV>(K, {A.p + m * A.ar, A.ar, A.ak}, B, ldb, C + m * ldc, ldc, alpha, accumulate), m += 4;
    if (m + 2 <= M) tile<2, NV>(K, {A.p + m * A.ar, A.ar, A.ak}, B, ldb, C + m * ldc, ldc, alpha, accumulate), m += 2;
    if (m < M) tile<1, NV>(K, {A.p + m * A.ar, A.ar, A.ak}, B, ldb, C + m * ldc, ldc, alpha, accumulate);
}

}  // namespace

REMAT_VECTOR_CLONES
void product(std::size_t M, std::size_t N, std::size_t K, Left A, const float* B, std::size_t ldb, float* C,
             std::size_t ldc, float alpha, bool accumulate) {
    std::size_t n = 0;
    for (; n + 64 <= N; n += 64) column_block<4>(M, K, A, B + n, ldb, C + n, ldc, alpha, accumulate);
    if (n + 32 <= N) column_block<2>(M, K, A, B + n, ldb, C + n, ldc, alpha, accumulate), n += 32;
    if (n + 16 <= N) column_block<1>(M, K, A, B + n, ldb, C + n, ldc, alpha, accumulate), n += 16;
    if (n < N) narrow(M, N - n, K, A, B + n, ldb, C + n, ldc, alpha, accumulate);
}

}  // namespace remat::ops::detail
