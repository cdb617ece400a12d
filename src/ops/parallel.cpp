#include "parallel.hpp"

#include <cblas.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "remat/ops/threads.hpp"

namespace remat::ops {
namespace detail {
namespace {

// One parallel_for call: pieces are claimed through an atomic counter by whichever thread is free.
// An exception in a piece stops the claiming; the first one is rethrown to the caller once every
// thread has left the job.
struct Job {
    Job(const std::function<void(std::size_t)>& f, std::size_t n) : body(&f), pieces(n) {}

    const std::function<void(std::size_t)>* body;
    std::size_t pieces;
    std::atomic<std::size_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;

    void run() {
        for (std::size_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < pieces;) {
            try {
                (*body)(p);
            } catch (...) {
                std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
                next.store(pieces, std::memory_order_relaxed);
            }
        }
    }
    void rethrow() {
        if (error) std::rethrow_exception(error);
    }
};

thread_local bool inside_pool = false;

// Workers sleep on a condition variable between jobs: they never spin, so they do not take a core
// from OpenBLAS's threads while a GEMM runs. The caller runs pieces too and, when it finds none
// left, waits only for the pieces workers have already started.
class Pool {
public:
    explicit Pool(std::size_t workers) {
        threads_.reserve(workers);
        for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
    }
    ~Pool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_) t.join();
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // False when another thread is using the pool: the caller then runs the job alone.
    bool try_run(Job& job) {
        if (busy_.exchange(true, std::memory_order_acquire)) return false;
        {
            std::lock_guard lock(mutex_);
            job_ = &job;
            ++generation_;
        }
        wake_.notify_all();
        inside_pool = true;
        job.run();  // catches what its pieces throw
        inside_pool = false;
        {
            std::unique_lock lock(mutex_);
            job_ = nullptr;  // late wakers find nothing to do
            done_.wait(lock, [this] { return active_ == 0; });
        }
        busy_.store(false, std::memory_order_release);
        return true;
    }

private:
    void work() {
        inside_pool = true;
        std::uint64_t seen = 0;
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return stop_ || (job_ && generation_ != seen); });
            if (stop_) return;
            seen = generation_;
            Job* job = job_;
            ++active_;
            lock.unlock();
            job->run();
            lock.lock();
            if (--active_ == 0) done_.notify_all();
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    Job* job_ = nullptr;
    std::uint64_t generation_ = 0;
    std::size_t active_ = 0;
    bool stop_ = false;
    std::atomic<bool> busy_{false};
};

std::size_t default_threads() {
    if (const char* env = std::getenv("REMAT_NUM_THREADS")) {
        const long n = std::strtol(env, nullptr, 10);
        if (n >= 1) return static_cast<std::size_t>(n);
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? hw : 1;
}

std::size_t& thread_setting() {
    static std::size_t n = default_threads();
    return n;
}

std::mutex pool_mutex;  // guards creating and replacing the pool

std::unique_ptr<Pool>& pool_slot() {
    static std::unique_ptr<Pool> pool;
    return pool;
}

Pool* pool() {
    std::lock_guard lock(pool_mutex);
    auto& p = pool_slot();
    if (!p && thread_setting() > 1) {
        p = std::make_unique<Pool>(thread_setting() - 1);
    }
    return p.get();
}
}  // namespace

// GEMMs are split over the pool (gemm.cpp) and OpenBLAS always runs single-threaded: two pools on
// the same cores fight (OpenBLAS's idle threads spin in sched_yield between calls), and OpenBLAS's
// own split of C changes the bits on some CPUs.
void single_threaded_blas() {
    static const bool done = [] {
        openblas_set_num_threads(1);
        return true;
    }();
    (void)done;
}

void parallel_for(std::size_t pieces, const std::function<void(std::size_t)>& body) {
    Job job(body, pieces);
    if (pieces > 1 && !inside_pool && thread_setting() > 1) {
        if (Pool* p = pool(); p && p->try_run(job)) {
            job.rethrow();
            return;
        }
    }
    job.run();
    job.rethrow();
}

}  // namespace detail

std::size_t num_threads() { return detail::thread_setting(); }

void set_num_threads(std::size_t n) {
    std::lock_guard lock(detail::pool_mutex);
    n = n ? n : 1;
    if (n == detail::thread_setting()) return;
    detail::pool_slot().reset();
    detail::thread_setting() = n;
}

}  // namespace remat::ops
