#include "remat/core/memory.hpp"

#include <atomic>

namespace remat::memory {
namespace {
std::atomic<std::size_t> live{0};
std::atomic<std::size_t> peak{0};
constexpr std::align_val_t alignment{64};
}  // namespace

std::size_t live_bytes() { return live.load(std::memory_order_relaxed); }
std::size_t peak_bytes() { return peak.load(std::memory_order_relaxed); }
void reset_peak() { peak.store(live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

namespace detail {
void* allocate(std::size_t bytes) {
    void* p = ::operator new(bytes == 0 ? 1 : bytes, alignment);
    std::size_t now = live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::size_t old_peak = peak.load(std::memory_order_relaxed);
    while (now > old_peak && !peak.compare_exchange_weak(old_peak, now, std::memory_order_relaxed)) {
    }
    return p;
}
void deallocate(void* p, std::size_t bytes) noexcept {
    live.fetch_sub(bytes, std::memory_order_relaxed);
    ::operator delete(p, alignment);
}
}  // namespace detail
}  // namespace remat::memory
