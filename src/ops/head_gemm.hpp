#pragma once
// The per-head products of fused attention (private to src/ops): small GEMMs (D = 32 or 64 deep,
// T up to a few thousand) on strided heads. OpenBLAS would pack every operand of every (batch, head)
// anew, and its threads would fight this pool's. Every element of C is one running sum over k in
// order 0, 1, …, K − 1, whatever tile it falls in.
#include <cstddef>

namespace remat::ops::detail {

// The left operand A(r, k) = A[r·ar + k·ak]: plain (ar = row stride, ak = 1) or transposed (ar = 1).
struct Left {
    const float* p;
    std::size_t ar, ak;
};

// C (M, N) = alpha·A·B or C += alpha·A·B, with A (M, K) as `Left` and B (K, N) of row stride ldb.
void product(std::size_t M, std::size_t N, std::size_t K, Left A, const float* B, std::size_t ldb, float* C,
             std::size_t ldc, float alpha, bool accumulate);

}  // namespace remat::ops::detail
