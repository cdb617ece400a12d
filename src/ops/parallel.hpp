#pragma once
// The kernels' thread pool (private to src/; the public knob is remat/ops/threads.hpp).
#include <cstddef>
#include <functional>

namespace remat::ops::detail {

// Calls body(piece) once for every piece in [0, pieces), spread over the pool's threads (the caller
// takes part). Pieces are claimed one at a time, so any thread may run any piece: a body must depend
// only on its piece index, never on which thread runs it. Runs serially for a single piece, with
// one thread, or when the pool is already busy (a nested or concurrent call).
void parallel_for(std::size_t pieces, const std::function<void(std::size_t piece)>& body);

// Sets OpenBLAS to one thread, once: remat's pool splits GEMMs itself (gemm.cpp).
void single_threaded_blas();

// Pieces of `grain` items (the last one shorter) for n items, at least 1: a function of the problem only.
inline std::size_t pieces_for(std::size_t n, std::size_t grain) { return n <= grain ? 1 : (n + grain - 1) / grain; }

// body(begin, end) over [0, n) in pieces of `grain` items, in parallel. For work whose results per
// item do not depend on the other items of its piece (element-wise and row-wise kernels).
template <class Body>
void parallel_ranges(std::size_t n, std::size_t grain, Body&& body) {
    const std::size_t pieces = pieces_for(n, grain);
    if (pieces == 1) {
        body(std::size_t{0}, n);
        return;
    }
    parallel_for(pieces, [&](std::size_t p) { body(p * grain, p + 1 == pieces ? n : (p + 1) * grain); });
}

// Grains: about 32 K floats of work per piece, enough to pay for handing a piece to another thread.
constexpr std::size_t elementwise_grain = 1 << 15;
inline std::size_t rows_grain(std::size_t row_length) {
    return row_length >= elementwise_grain ? 1 : elementwise_grain / (row_length ? row_length : 1);
}

// data[0, n) = value, on the pool: gradient buffers come to hundreds of megabytes a step, and one
// thread filling them left the other core idle.
inline void fill(float* data, std::size_t n, float value) {
    parallel_ranges(n, elementwise_grain, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) data[i] = value;
    });
}

// dst[j] += Σ_r src[r·n + j] over rows r < rows in order, for j < n: a bias gradient. Split by
// columns, so every column keeps its serial summation order whatever the number of threads.
inline void add_column_sums(const float* src, std::size_t rows, std::size_t n, float* dst) {
    std::size_t width = rows ? elementwise_grain / rows : n;
    width = width < 16 ? 16 : (width + 15) / 16 * 16;
    parallel_ranges(n, width, [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = 0; r < rows; ++r) {
            const float* row = src + r * n;
            for (std::size_t j = begin; j < end; ++j) dst[j] += row[j];
        }
    });
}

}  // namespace remat::ops::detail
