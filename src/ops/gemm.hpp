#pragma once
// Row-major matrix products C = op(A)·op(B) + beta·C, C (M, N), op(A) (M, K), op(B) (K, N), beta 0 or
// 1, split into bands of C on the pool: sgemm (OpenBLAS) for fp32 operands, oneDNN's matmul for bf16.
#include <cstddef>
#include <cstdint>
#include <functional>

namespace remat::ops::detail {

void gemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
          const float* B, float beta, float* C);

// The same on the calling thread alone, with leading dimensions: for kernels that cut their own
// tiles (a piece of the pool's work multiplying one tile, dropout_linear.cpp). fp32 operands.
void gemm_here(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const float* A,
               std::size_t lda, const float* B, std::size_t ldb, float beta, float* C, std::size_t ldc);

// bf16 operands (remat::to_bfloat16's bits), fp32 accumulation and fp32 C.
void gemm_bf16(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const std::uint16_t* A,
               const std::uint16_t* B, float beta, float* C);

// How a product's C is cut for the pool: `count` bands of `step` rows (by_rows) or columns of C over
// [0, extent), the last band taking the rest. A function of the shape alone.
struct Bands {
    bool by_rows = true;
    std::size_t extent = 0, count = 1, step = 0;
};
// rows_first: bands of rows whenever C has 64 rows or more (oneDNN's AMX kernels need every operand
// dense, and a band of whole rows of row-major A and C is); otherwise whichever cut leaves the
// smaller operand to be read whole by every band.
Bands bands_for(std::size_t M, std::size_t N, std::size_t K, bool rows_first = false);
// body(begin, end) for every band, on the pool.
void for_each_band(const Bands& bands, const std::function<void(std::size_t begin, std::size_t end)>& body);

// Handles the products with nothing to multiply (M, N or K zero); false for the others.
bool empty_product(std::size_t M, std::size_t N, std::size_t K, float beta, float* C);

}  // namespace remat::ops::detail
