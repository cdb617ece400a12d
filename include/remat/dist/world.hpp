#pragma once
// Data-parallel training's process group (docs/distributed.md). A program started by mpirun (its
// environment has OMPI_COMM_WORLD_SIZE or PMIX_RANK) joins MPI's world; any other program is a world
// of one that never initialises MPI and runs exactly as without this header — no output, no orted.
//
//   dist::World world;                                   // one per process, before any other dist:: call
//   world.broadcast(params);                             // rank 0's initial weights everywhere
//   ... each rank computes its micro-batch's gradient g ...
//   world.sum_in_rank_order(g);                          // Σ over ranks, the same bits on every rank
//
// Sums run in an order remat fixes, never MPI's (whose allreduce associates by message size and
// algorithm): every element is 0 + x₀ + x₁ + … + x_{N−1}, rank by rank, so N ranks give the bits one
// process gives when it adds the same N contributions in that order (train::MicroBatches does).
// <mpi.h> stays out of this header.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "remat/core/tensor.hpp"

namespace remat::dist {

// Whether mpirun started this process (OpenMPI's and PMIx's variables in the environment).
bool launched_by_mpirun();

class World {
public:
    // Joins MPI's world when launched by mpirun (MPI_Init_thread, funneled: only the thread that made
    // the World calls MPI), else a world of one. At most one World per process.
    World();
    // Leaves MPI cleanly. While an exception is unwinding it ends the process with exit code 1
    // instead, without finalizing (a rank that finalizes while another waits for it would hang them
    // both); mpirun then stops the other ranks.
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    std::size_t rank() const { return rank_; }
    std::size_t size() const { return size_; }
    bool is_root() const { return rank_ == 0; }
    // Whether this process joined MPI (launched by mpirun), even as a world of one.
    bool uses_mpi() const { return mpi_; }

    // Every rank's tensors become rank 0's, in place; shapes must agree (checked: a mismatch aborts
    // the job with a message naming the tensor's index and both shapes).
    void broadcast(std::span<Tensor* const> tensors) const;
    // Each tensor becomes its root's (roots[t], a rank), in place, on every rank: ZeRO-1 gathers the
    // parameters each rank updated. Every rank passes the same shapes and roots.
    void broadcast_from(std::span<Tensor* const> tensors, std::span<const std::size_t> roots) const;
    // values ← Σ over ranks, element by element in rank order starting from +0; the same bits on
    // every rank. Every rank must pass the same number of values.
    void sum_in_rank_order(std::span<float> values) const;
    void sum_in_rank_order(std::span<double> values) const;
    double sum_in_rank_order(double value) const;
    // Every rank's `mine` (the same count on each), concatenated in rank order, on every rank.
    std::vector<float> all_gather(std::span<const float> mine) const;
    // Every rank's text (of any length), in rank order, on every rank.
    std::vector<std::string> all_gather(const std::string& mine) const;
    void barrier() const;

    // Prints "error: [rank R: ]why" on stderr and ends this process with `code` (non-zero) without
    // finalizing MPI; mpirun then stops every other rank and exits non-zero.
    [[noreturn]] void abort(const std::string& why, int code = 1) const;
    // The same, for an error every rank found alike (ranks started with different arguments): called by
    // every rank, rank 0 alone prints "error: why", then all end together.
    [[noreturn]] void abort_together(const std::string& why, int code = 1) const;

private:
    [[noreturn]] void end_job(int code) const;

    std::size_t rank_ = 0, size_ = 1;
    bool mpi_ = false;
    int uncaught_ = 0;
};

}  // namespace remat::dist
