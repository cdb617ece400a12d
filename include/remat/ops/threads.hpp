#pragma once
// remat's kernels (fused attention, layer norm, GELU, cross-entropy, …) and its GEMMs split their
// work over one small pool of threads: the caller plus num_threads() − 1 workers that poll for the
// next call for at most 100 µs, then sleep on a condition variable (an idle pool takes no core).
// OpenBLAS runs single-threaded (remat sets it so at its first GEMM) and each sgemm is cut into bands of rows or columns of C run on the pool:
// two pools on the same cores fight, and OpenBLAS's idle threads spin between calls. Kernels and
// GEMM bands cut their work into pieces fixed by the problem's shape, never by the thread count, so
// results are bitwise identical for any setting.
#include <cstddef>

namespace remat::ops {

// Threads used by remat's kernels, the caller included. Default: REMAT_NUM_THREADS if set, else
// the number of CPUs the process may run on (its affinity: one per rank under mpirun's default
// binding), else the number of hardware threads.
std::size_t num_threads();
// 1 runs every kernel on the calling thread. Call it while no kernel is running.
void set_num_threads(std::size_t n);

}  // namespace remat::ops
