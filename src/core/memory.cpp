#include "remat/core/memory.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "src/core/address_sanitizer.hpp"
#ifdef REMAT_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace remat::memory {
namespace {
std::atomic<std::size_t> live{0};
std::atomic<std::size_t> peak{0};
std::atomic<std::size_t> highest{0};  // like peak, never reset: what the process has needed at once
constexpr std::align_val_t alignment{64};

void raise(std::atomic<std::size_t>& mark, std::size_t now) {
    std::size_t old = mark.load(std::memory_order_relaxed);
    while (now > old && !mark.compare_exchange_weak(old, now, std::memory_order_relaxed)) {
    }
}

// Freed blocks of at least `cached_from` bytes are kept for reuse, by exact size: a training step
// allocates the same sizes every time, and handing a large block back to malloc makes it return the
// pages to the kernel (munmap, or trimming the heap top), so the next step page-faults every one of
// them back in, zeroed — measured 150,000 faults and a fifth of the step on the deep benchmark.
// Smaller blocks are left to malloc, which reuses them from its heap.
constexpr std::size_t cached_from = 64 * 1024;

// Bound: live + cached bytes never exceed the highest live_bytes() so far, times `limit_factor`, so
// the cache never makes the process hold much more than it has needed at once and checkpointing's
// savings stay real. The slack lets blocks of sizes used in different phases of a step coexist.
constexpr double limit_factor = 1.25;  // 1.0 missed a few blocks every step of the deep benchmark

struct Cache {
    std::mutex mutex;
    std::map<std::size_t, std::vector<void*>> blocks;  // size -> free blocks of that size, never empty
    std::size_t bytes = 0;
};
// Never destroyed: tensors in static storage may be freed after any static destructor has run.
Cache& cache() {
    static Cache* c = new Cache;
    return *c;
}

void free_block(void* p, [[maybe_unused]] std::size_t bytes) {
#ifdef REMAT_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#endif
    ::operator delete(p, alignment);
}

// Takes one block off the list of its size (the caller holds the lock).
void* pop(Cache& c, std::map<std::size_t, std::vector<void*>>::iterator it) {
    void* p = it->second.back();
    c.bytes -= it->first;
    it->second.pop_back();
    if (it->second.empty()) c.blocks.erase(it);
    return p;
}

void* take_cached(std::size_t bytes) {
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    if (auto it = c.blocks.find(bytes); it != c.blocks.end()) {
        void* p = pop(c, it);
#ifdef REMAT_ASAN
        ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#endif
        return p;
    }
    // A fresh block of `bytes` is coming: make room under the bound, largest cached blocks first.
    const std::size_t now = live.load(std::memory_order_relaxed);
    const std::size_t high = std::max(highest.load(std::memory_order_relaxed), now + bytes);
    const auto limit = static_cast<std::size_t>(static_cast<double>(high) * limit_factor);
    while (!c.blocks.empty() && now + c.bytes + bytes > limit) {
        const auto largest = std::prev(c.blocks.end());
        const std::size_t size = largest->first;
        free_block(pop(c, largest), size);
    }
    return nullptr;
}

void keep_cached(void* p, std::size_t bytes) {
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    auto& list = c.blocks[bytes];
    try {
        list.push_back(p);
    } catch (...) {
        if (list.empty()) c.blocks.erase(bytes);
        throw;
    }
    c.bytes += bytes;
#ifdef REMAT_ASAN
    ASAN_POISON_MEMORY_REGION(p, bytes);  // a use after free still reports
#endif
}
}  // namespace

std::size_t live_bytes() { return live.load(std::memory_order_relaxed); }
std::size_t peak_bytes() { return peak.load(std::memory_order_relaxed); }
std::size_t highest_bytes() { return highest.load(std::memory_order_relaxed); }
void reset_peak() { peak.store(live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

std::size_t cached_bytes() {
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    return c.bytes;
}

void release_cached() {
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    for (auto& [bytes, list] : c.blocks)
        for (void* p : list) free_block(p, bytes);
    c.blocks.clear();
    c.bytes = 0;
}

namespace {
// The innermost AllocationLimit of this thread, and what the thread's tracked blocks have grown by
// since it began (frees of older blocks make it negative).
thread_local AllocationLimit* current_limit = nullptr;
thread_local long long growth_under_limit = 0;
}  // namespace

AllocationLimit::AllocationLimit(std::size_t bytes)
    : limit_(bytes), outer_(current_limit), outer_growth_(growth_under_limit) {
    current_limit = this;
    growth_under_limit = 0;
}

AllocationLimit::~AllocationLimit() {
    current_limit = outer_;
    growth_under_limit += outer_growth_;  // what this scope kept counts against the outer one
}

std::size_t AllocationLimit::used() const { return growth_under_limit > 0 ? static_cast<std::size_t>(growth_under_limit) : 0; }

namespace detail {
void* allocate(std::size_t bytes) {
    if (current_limit &&
        static_cast<long double>(growth_under_limit) + static_cast<long double>(bytes) > static_cast<long double>(current_limit->limit()))
        throw OverLimit(bytes, current_limit->limit());
    void* p = bytes >= cached_from ? take_cached(bytes) : nullptr;
    if (!p) p = ::operator new(bytes == 0 ? 1 : bytes, alignment);
    if (current_limit) growth_under_limit += static_cast<long long>(bytes);  // only once the block exists
    const std::size_t now = live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    raise(peak, now);
    raise(highest, now);
    return p;
}
void deallocate(void* p, std::size_t bytes) noexcept {
    live.fetch_sub(bytes, std::memory_order_relaxed);
    if (current_limit) growth_under_limit -= static_cast<long long>(bytes);
    if (bytes >= cached_from) {
        try {
            keep_cached(p, bytes);
            return;
        } catch (...) {  // no memory for the list entry: free the block instead
        }
    }
    ::operator delete(p, alignment);
}
}  // namespace detail
}  // namespace remat::memory
