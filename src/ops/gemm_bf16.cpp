// bf16 products on the CPU's matrix units through oneDNN's matmul (it picks AMX, brg:avx512_core_amx_bf16,
// where the CPU has it). Debian's oneDNN runs on OpenMP: each band runs with OpenMP set to one thread
// on the pool thread that takes it, so no OpenMP team is ever started and remat keeps one pool.
// docs/design/bf16-research.md has the measurements behind these choices.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>
#include <oneapi/dnnl/dnnl.hpp>

#include "gemm.hpp"
#include "mixed.hpp"
#include "parallel.hpp"

namespace remat::ops::detail {

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

const dnnl::engine& cpu() {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

// OpenMP's thread count is per thread: one while oneDNN runs here, then what the thread had.
class OneOpenMPThread {
public:
    OneOpenMPThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
    ~OneOpenMPThread() { omp_set_num_threads(saved_); }
    OneOpenMPThread(const OneOpenMPThread&) = delete;
    OneOpenMPThread& operator=(const OneOpenMPThread&) = delete;

private:
    int saved_;
};

dnnl::memory::dim as_dim(std::size_t n) { return static_cast<dnnl::memory::dim>(n); }

// A (rows, cols) matrix stored row-major with leading dimension ld, or its transpose.
dnnl::memory::desc matrix(std::size_t rows, std::size_t cols, std::size_t ld, bool transposed, dt type) {
    return dnnl::memory::desc(dims{as_dim(rows), as_dim(cols)}, type,
                              transposed ? dims{1, as_dim(ld)} : dims{as_dim(ld), 1});
}

// C (M, N; ldc) = op(A)·op(B) (+ C when accumulating), on the calling thread. oneDNN's primitive cache
// makes building the same shape again cost about a microsecond; the scratchpad is this thread's own
// (a primitive with oneDNN's own scratchpad must run on the thread that made it).
void matmul_here(bool ta, bool tb, std::size_t M, std::size_t N, std::size_t K, const std::uint16_t* A, std::size_t lda,
                 const std::uint16_t* B, std::size_t ldb, bool accumulate, float* C, std::size_t ldc) {
    const OneOpenMPThread one;
    const dnnl::memory::desc a = matrix(M, K, lda, ta, dt::bf16), b = matrix(K, N, ldb, tb, dt::bf16),
                             c = matrix(M, N, ldc, false, dt::f32);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (accumulate) {
        dnnl::post_ops sum;
        sum.append_sum(1.0f);
        attr.set_post_ops(sum);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, cpu());
    const dnnl::matmul product(pd);
    thread_local std::vector<std::uint8_t> scratch;
    const std::size_t scratch_bytes = pd.scratchpad_desc().get_size();
    if (scratch.size() < scratch_bytes) scratch.resize(scratch_bytes);
    thread_local dnnl::stream stream(cpu());
    product.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(a, cpu(), const_cast<std::uint16_t*>(A))},
                             {DNNL_ARG_WEIGHTS, dnnl::memory(b, cpu(), const_cast<std::uint16_t*>(B))},
                             {DNNL_ARG_DST, dnnl::memory(c, cpu(), C)},
                             {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), cpu(), scratch.data())}});
    stream.wait();
}

// The (cols, rows) transpose of a row-major (rows, cols) matrix, in tiles on the pool.
Bf16Values transposed(const std::uint16_t* in, std::size_t rows, std::size_t cols) {
    Bf16Values out(rows * cols);
    constexpr std::size_t tile = 64;
    parallel_ranges(cols, tile, [&](std::size_t c0, std::size_t c1) {
        for (std::size_t r0 = 0; r0 < rows; r0 += tile)
            for (std::size_t c = c0; c < c1; ++c)
                for (std::size_t r = r0; r < std::min(rows, r0 + tile); ++r) out[c * rows + r] = in[r * cols + c];
    });
    return out;
}

}  // namespace

void gemm_bf16(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const std::uint16_t* A,
               const std::uint16_t* B, float beta, float* C) {
    if (empty_product(M, N, K, beta, C)) return;
    // oneDNN runs AMX only on dense operands (a strided one falls back to kernels at half the speed or
    // less): a transposed A is copied into rows first, and C is cut into bands of whole rows.
    Bf16Values rows;
    if (transpose_a) {
        rows = transposed(A, K, M);
        A = rows.data();
    }
    const std::size_t ldb = transpose_b ? K : N;
    const bool accumulate = beta != 0.0f;
    const Bands bands = bands_for(M, N, K, /*rows_first=*/true);
    for_each_band(bands, [&](std::size_t begin, std::size_t end) {
        if (bands.by_rows) {
            matmul_here(false, transpose_b, end - begin, N, K, A + begin * K, K, B, ldb, accumulate, C + begin * N, N);
            return;
        }
        // Fewer than 64 rows: columns [begin, end) of C into a dense buffer, then into C.
        const std::size_t width = end - begin;
        std::vector<float, memory::TrackingAllocator<float>> part(M * width);
        matmul_here(false, transpose_b, M, width, K, A, K, transpose_b ? B + begin * ldb : B + begin, ldb, false,
                    part.data(), width);
        for (std::size_t m = 0; m < M; ++m) {
            float* c = C + m * N + begin;
            const float* p = part.data() + m * width;
            for (std::size_t j = 0; j < width; ++j) c[j] = accumulate ? c[j] + p[j] : p[j];
        }
    });
}

}  // namespace remat::ops::detail
