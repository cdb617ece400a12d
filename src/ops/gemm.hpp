#pragma once
// Row-major sgemm: C = alpha·op(A)·op(B) + beta·C, C (M, N), op(A) (M, K), op(B) (K, N).
#include <cstddef>

namespace remat::ops::detail {

void gemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
          const float* B, float beta, float* C);

}  // namespace remat::ops::detail
