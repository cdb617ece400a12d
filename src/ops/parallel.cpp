#include "parallel.hpp"

#include <cblas.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/core/in_quotes.hpp"
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

// Hands jobs to the workers. A worker that finishes a job polls for the next one for a short while
// (spin_time) before it sleeps on a condition variable, and the caller polls for the workers'
// pieces the same way: a training step makes thousands of calls, back to back, and waking a sleeping
// thread cost 20-50 µs each on this VM. Polling stops after spin_time, so an idle pool takes no core:
// it never competes with another process for long (OpenBLAS's threads, which yield in a loop
// between calls, are the opposite).
//
// Publishing a job and going to sleep are ordered by sequentially consistent atomics: the caller
// bumps `generation_` then reads `sleepers_`, a worker bumps `sleepers_` then re-reads
// `generation_` under the mutex, so one of them always sees the other. Likewise a worker counts
// itself `active_` before it reads `job_`, and the caller clears `job_` before it waits for
// `active_` to drop to zero, so no worker touches a job after the caller has returned.
class Pool {
public:
    explicit Pool(std::size_t workers) {
        threads_.reserve(workers);
        try {
            for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
        } catch (const std::exception&) {  // EAGAIN, no memory for a stack: the workers started will do
        }
    }
    ~Pool() {
        stop_.store(true);
        {
            std::lock_guard lock(mutex_);
        }
        wake_.notify_all();
        for (auto& t : threads_) t.join();
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // False when another thread is using the pool: the caller then runs the job alone.
    bool try_run(Job& job) {
        if (busy_.exchange(true, std::memory_order_acquire)) return false;
        job_.store(&job);
        generation_.fetch_add(1);
        if (sleepers_.load() > 0) {
            { std::lock_guard lock(mutex_); }  // a worker between its check and its wait now waits
            wake_.notify_all();
        }
        inside_pool = true;
        job.run();  // catches what its pieces throw
        inside_pool = false;
        job_.store(nullptr);  // late workers find nothing to do
        if (!poll_until([this] { return active_.load() == 0; })) {
            std::unique_lock lock(mutex_);
            caller_waiting_.store(true);
            done_.wait(lock, [this] { return active_.load() == 0; });
            caller_waiting_.store(false);
        }
        busy_.store(false, std::memory_order_release);
        return true;
    }

private:
    static constexpr auto spin_time = std::chrono::microseconds(100);

    // Polls `ready` for up to spin_time; true as soon as it holds.
    template <class Ready>
    static bool poll_until(Ready ready) {
        const auto deadline = std::chrono::steady_clock::now() + spin_time;
        for (unsigned i = 0;; ++i) {
            if (ready()) return true;
            if (i % 64 == 63 && std::chrono::steady_clock::now() > deadline) return false;
            relax();
        }
    }
    static void relax() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }

    void work() {
        inside_pool = true;
        std::uint64_t seen = 0;
        for (;;) {
            const auto fresh = [&] { return stop_.load() || generation_.load() != seen; };
            if (!poll_until(fresh)) {
                std::unique_lock lock(mutex_);
                sleepers_.fetch_add(1);
                wake_.wait(lock, fresh);
                sleepers_.fetch_sub(1);
            }
            if (stop_.load()) return;
            seen = generation_.load();
            active_.fetch_add(1);
            if (Job* job = job_.load()) job->run();
            if (active_.fetch_sub(1) == 1 && caller_waiting_.load()) {
                { std::lock_guard lock(mutex_); }  // the caller is waiting, not between check and wait
                done_.notify_all();
            }
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::atomic<Job*> job_{nullptr};
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<std::size_t> active_{0}, sleepers_{0};
    std::atomic<bool> stop_{false}, caller_waiting_{false}, busy_{false};
};

// The CPUs this process may run on (mpirun binds each rank to its own; taskset narrows it), else the
// machine's.
std::size_t allowed_cpus() {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0)
        return static_cast<std::size_t>(CPU_COUNT(&allowed));
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? hw : 1;
}

std::size_t default_threads() {
    try {
        if (const auto n = requested_threads()) return static_cast<std::size_t>(std::min<std::uint64_t>(*n, max_threads()));
    } catch (const ValueError&) {  // a bad value: the default (remat's command line refuses it first)
    }
    return allowed_cpus();
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

std::size_t max_threads() { return std::max<std::size_t>(4, 4 * detail::allowed_cpus()); }

std::optional<std::uint64_t> requested_threads() {
    const char* env = std::getenv("REMAT_NUM_THREADS");
    if (!env || !*env) return std::nullopt;
    const std::string text = env;
    const bool digits = text.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    const unsigned long long n = digits ? std::strtoull(env, nullptr, 10) : 0;
    if (!digits || (n == 0 && errno != ERANGE))
        throw ValueError("REMAT_NUM_THREADS must be a whole number of at least 1, got " + in_quotes(text));
    return errno == ERANGE ? std::numeric_limits<std::uint64_t>::max() : n;
}

std::size_t num_threads() { return detail::thread_setting(); }

void set_num_threads(std::size_t n) {
    std::lock_guard lock(detail::pool_mutex);
    n = n ? n : 1;
    if (n == detail::thread_setting()) return;
    detail::pool_slot().reset();
    detail::thread_setting() = n;
}

}  // namespace remat::ops
