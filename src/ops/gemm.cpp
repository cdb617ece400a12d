#include "gemm.hpp"

#include <cblas.h>

namespace remat::ops::detail {

void gemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
          const float* B, float beta, float* C) {
    if (M == 0 || N == 0) return;
    if (K == 0) {  // an empty sum; BLAS rejects a leading dimension of 0
        if (beta == 0.0f)
            for (std::size_t i = 0; i < M * N; ++i) C[i] = 0.0f;
        return;
    }
    const auto lda = static_cast<blasint>(transpose_a ? M : K);
    const auto ldb = static_cast<blasint>(transpose_b ? K : N);
    cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), 1.0f, A, lda, B, ldb,
                beta, C, static_cast<blasint>(N));
}

}  // namespace remat::ops::detail
