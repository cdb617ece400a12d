#pragma once
// remat's kernels (fused attention, layer norm, GELU, cross-entropy, …) and its GEMMs split their
// work over one small pool of threads: the caller plus num_threads() − 1 workers that poll for the
// next call for at most 100 µs, then sleep on a condition variable (an idle pool takes no core).
// OpenBLAS runs single-threaded (remat sets it so at its first GEMM) and each sgemm is cut into bands of rows or columns of C run on the pool:
// two pools on the same cores fight, and OpenBLAS's idle threads spin between calls. Kernels and
// GEMM bands cut their work into pieces fixed by the problem's shape, never by the thread count, so
// results are bitwise identical for any setting.
#include <cstddef>
#include <cstdint>
#include <optional>

namespace remat::ops {

// The most threads remat runs: four per CPU this process may run on (at least 4). More would only
// queue for the cores, every kernel call waking them all.
std::size_t max_threads();

// REMAT_NUM_THREADS as given: none when unset or empty; a count of at least 1 (past 2^64 − 1: that);
// ValueError "REMAT_NUM_THREADS must be a whole number of at least 1, got "abc"" for anything else.
// The library itself reads a bad value as unset (the default) and a count above max_threads() as
// max_threads(); a program checks it up front with this (remat does: one error line, or a warning).
std::optional<std::uint64_t> requested_threads();

// Threads used by remat's kernels, the caller included. Default: REMAT_NUM_THREADS if set, else
// the number of CPUs the process may run on (its affinity: one per rank under mpirun's default
// binding), else the number of hardware threads. Workers the system cannot start (no memory for
// their stacks, a process limit) are done without: the others do the work, to the same bits.
std::size_t num_threads();
// 1 runs every kernel on the calling thread. Call it while no kernel is running.
void set_num_threads(std::size_t n);

}  // namespace remat::ops
