#include "gemm.hpp"

#include <cblas.h>

#include <algorithm>

#include "parallel.hpp"
#include "remat/ops/threads.hpp"

namespace remat::ops::detail {

namespace {
// One row of C (generation's decode steps: one token) goes through sgemv, which streams B at close to the
// memory's bandwidth; OpenBLAS's sgemm packs B first and reached about half of it. The choice is a
// function of the shape alone, as the bands below are.
void sgemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
           std::size_t lda, const float* B, std::size_t ldb, float beta, float* C, std::size_t ldc) {
    if (M == 1) {  // C (1, N) = a (1, K) · op(B); a is contiguous whether or not it is transposed (lda = 1 or K)
        if (transpose_b)  // B (N, K): C = B · a
            cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(N), static_cast<blasint>(K), 1.0f, B,
                        static_cast<blasint>(ldb), A, 1, beta, C, 1);
        else  // B (K, N): C = Bᵀ · a
            cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<blasint>(K), static_cast<blasint>(N), 1.0f, B,
                        static_cast<blasint>(ldb), A, 1, beta, C, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), 1.0f, A,
                static_cast<blasint>(lda), B, static_cast<blasint>(ldb), beta, C, static_cast<blasint>(ldc));
}
}  // namespace

Bands bands_for(std::size_t M, std::size_t N, std::size_t K, bool rows_first) {
    // C in bands of rows — or of columns when B is the bigger operand, so that the operand every band
    // reads whole, and packs again, is the smaller one — run on the pool. Never split along K. The
    // bands are a function of the shape alone, never of the thread count: OpenBLAS's kernels (its
    // Haswell ones, picked on AMD Zen) and oneDNN's give bits that depend on where C is cut, so the
    // same cuts on any number of threads are what keeps results bitwise identical. Two bands, more
    // only while each keeps 512 rows: 8 bands of 128 rows made a deep GPT-2 step 3-10 % slower on two
    // cores.
    Bands b;
    b.by_rows = N <= M || (rows_first && M >= 64);
    b.extent = b.by_rows ? M : N;
    // A single row is bound by reading B: split it once B passes a megabyte, whatever the FLOPs.
    const bool worth_splitting = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) >= 2e6 ||
                                 (M == 1 && N * K >= (std::size_t{1} << 18));
    if (worth_splitting && b.extent >= 64) {
        b.count = 2;
        while (b.count < 8 && b.extent / (2 * b.count) >= 512) b.count *= 2;
    }
    b.step = b.extent / b.count / 16 * 16;
    return b;
}

void for_each_band(const Bands& bands, const std::function<void(std::size_t begin, std::size_t end)>& body) {
    if (bands.count <= 1) {
        body(0, bands.extent);
        return;
    }
    parallel_for(bands.count, [&](std::size_t p) {
        const std::size_t begin = std::min(bands.extent, p * bands.step);
        const std::size_t end = p + 1 == bands.count ? bands.extent : std::min(bands.extent, (p + 1) * bands.step);
        if (begin < end) body(begin, end);
    });
}

bool empty_product(std::size_t M, std::size_t N, std::size_t K, float beta, float* C) {
    if (M != 0 && N != 0 && K != 0) return false;
    if (K == 0 && beta == 0.0f)  // an empty sum; BLAS rejects a leading dimension of 0
        for (std::size_t i = 0; i < M * N; ++i) C[i] = 0.0f;
    return true;
}

void gemm_here(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
               std::size_t lda, const float* B, std::size_t ldb, float beta, float* C, std::size_t ldc) {
    single_threaded_blas();
    if (M != 0 && N != 0 && K != 0)
        sgemm(transpose_a, transpose_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else if (K == 0 && beta == 0.0f)
        for (std::size_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
}

void gemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
          const float* B, float beta, float* C) {
    single_threaded_blas();
    if (empty_product(M, N, K, beta, C)) return;
    const std::size_t lda = transpose_a ? M : K, ldb = transpose_b ? K : N;
    const Bands bands = bands_for(M, N, K);
    for_each_band(bands, [&](std::size_t begin, std::size_t end) {
        if (bands.by_rows)  // rows [begin, end) of op(A) and C
            sgemm(transpose_a, transpose_b, end - begin, N, K, transpose_a ? A + begin : A + begin * lda, lda, B, ldb,
                  beta, C + begin * N, N);
        else  // columns [begin, end) of op(B) and C
            sgemm(transpose_a, transpose_b, M, end - begin, K, A, lda, transpose_b ? B + begin * ldb : B + begin, ldb,
                  beta, C + begin, N);
    });
}

}  // namespace remat::ops::detail
