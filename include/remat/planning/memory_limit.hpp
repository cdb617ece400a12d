#pragma once
// How much memory this process may still use: for `auto` checkpointing (Policy::fit_memory).
#include <cstddef>
#include <filesystem>
#include <string>

namespace remat::planning {

struct MemoryLimit {
    std::size_t limit = 0;     // the lowest of MemAvailable + resident, and every cgroup limit above the process
    std::string source;        // what set it: "MemAvailable + RSS" or the cgroup file
    std::size_t resident = 0;  // the process's resident set now (VmRSS): weights, gradients, caches, BLAS buffers
};

// Reads /proc/self/status, /proc/meminfo, /proc/self/cgroup and the cgroup files: v1's
// memory.limit_in_bytes up the hierarchy (and memory.stat's hierarchical_memory_limit), v2's
// memory.max up the tree, and ulimit -v (RLIMIT_AS: the address space left, only when root is "/").
// `root` replaces "/" (for tests).
MemoryLimit memory_limit(const std::filesystem::path& root = "/");

// The margin `auto` leaves unplanned: 5 % of the limit plus 128 MiB (allocator slack, the OS's page
// tables, buffers outside the memory tracker).
std::size_t memory_margin(std::size_t limit);

// The activation budget `auto` plans for: limit − resident − reserve − margin (0 when that is
// negative). `reserve` is memory the run will still allocate outside activations (gradients not yet
// allocated, an accumulation buffer).
std::size_t activation_budget(const MemoryLimit& limit, std::size_t reserve);

}  // namespace remat::planning
