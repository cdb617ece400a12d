#pragma once
// Tracking allocator: every Tensor's storage goes through it, so live and peak bytes are measured, not estimated.
#include <cstddef>
#include <new>

namespace remat::memory {

std::size_t live_bytes();  // bytes currently held by tracked containers
std::size_t peak_bytes();  // highest live_bytes() since the last reset_peak()
void reset_peak();         // peak := live
std::size_t highest_bytes();  // highest live_bytes() since the process started (never reset)

// Freed blocks of 64 KiB and more are kept for reuse by the next tensor of the same size (a
// training step allocates the same sizes every time; malloc would give their pages back to the
// kernel and fault them in again). They are not live bytes. live_bytes() + cached_bytes() stays
// within 1.25x highest_bytes().
std::size_t cached_bytes();
void release_cached();  // hand every cached block back to malloc

// Thrown by a tracked allocation that an AllocationLimit refuses.
class OverLimit : public std::bad_alloc {
public:
    OverLimit(std::size_t requested, std::size_t limit) : requested_(requested), limit_(limit) {}
    const char* what() const noexcept override { return "remat::memory::OverLimit: allocation over an AllocationLimit"; }
    std::size_t requested() const { return requested_; }  // the refused block's size
    std::size_t limit() const { return limit_; }
private:
    std::size_t requested_, limit_;
};

// While it lives, this thread's tracked allocations may grow by at most `bytes` (blocks freed in the
// scope give their room back); the allocation that would pass it throws OverLimit instead of asking
// the system. Bounds building a model from a config.json whose sizes the checkpoint does not justify.
// Scopes nest: the innermost one applies, and what it kept counts against the outer one afterwards.
class AllocationLimit {
public:
    explicit AllocationLimit(std::size_t bytes);
    ~AllocationLimit();
    AllocationLimit(const AllocationLimit&) = delete;
    AllocationLimit& operator=(const AllocationLimit&) = delete;
    std::size_t limit() const { return limit_; }
    std::size_t used() const;  // growth so far (while this is the innermost scope)
private:
    std::size_t limit_;
    AllocationLimit* outer_;
    long long outer_growth_;
};

namespace detail {
void* allocate(std::size_t bytes);
void deallocate(void* p, std::size_t bytes) noexcept;
}  // namespace detail

// A standard allocator whose blocks are 64-byte aligned and counted (thread-safe).
template <class T>
struct TrackingAllocator {
    using value_type = T;
    TrackingAllocator() noexcept = default;
    template <class U>
    TrackingAllocator(const TrackingAllocator<U>&) noexcept {}
    template <class U>
    struct rebind {
        using other = TrackingAllocator<U>;
    };
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(detail::allocate(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { detail::deallocate(p, n * sizeof(T)); }
    template <class U>
    bool operator==(const TrackingAllocator<U>&) const noexcept { return true; }
};

// Measures the peak of live bytes above the level at construction: activation memory of a region.
class PeakScope {
public:
    PeakScope() : baseline_(live_bytes()) { reset_peak(); }
    std::size_t peak_above_baseline() const {
        std::size_t p = peak_bytes();
        return p > baseline_ ? p - baseline_ : 0;
    }
    std::size_t baseline() const { return baseline_; }

private:
    std::size_t baseline_;
};

}  // namespace remat::memory
