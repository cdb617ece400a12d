#include "remat/dist/world.hpp"

#define OMPI_SKIP_MPICXX 1  // the deprecated C++ bindings do not compile cleanly at remat's warning level
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace remat::dist {

namespace {
// MPI counts are ints: long buffers go in pieces of at most this many elements.
constexpr std::size_t piece = std::size_t{1} << 28;

int as_count(std::size_t n) { return static_cast<int>(n); }

// Ends the job, naming `what`, unless every rank passes the same count (a mismatch would otherwise
// hang or mix the ranks' collectives).
void check_same_count(const World& world, std::size_t n, const char* what) {
    unsigned long long counts[2] = {n, ~static_cast<unsigned long long>(n)};  // max of n and of ~n: min and max
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (counts[0] != n || ~counts[1] != n)
        world.abort(std::string(what) + ": " + std::to_string(n) + " values here, another rank has a different number");
}

// Slice s of n values over N ranks: [n·s/N, n·(s+1)/N), owned (summed) by rank s. Fixed by n and N.
std::size_t slice_start(std::size_t n, std::size_t ranks, std::size_t s) { return n * s / ranks; }
}  // namespace

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

World::World() : uncaught_(std::uncaught_exceptions()) {
    static std::atomic<bool> made{false};
    if (made.exchange(true)) throw std::logic_error("dist::World: a process makes one World (MPI initialises once)");
    if (!launched_by_mpirun()) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank_ = static_cast<std::size_t>(rank);
    size_ = static_cast<std::size_t>(size);
    mpi_ = true;
}

World::~World() {
    if (!mpi_) return;
    if (std::uncaught_exceptions() > uncaught_) end_job(1);  // never finalize past a failure: the others may wait
    MPI_Finalize();
}

void World::abort(const std::string& why, int code) const {
    std::fprintf(stderr, "error: %s%s\n", size_ > 1 ? ("rank " + std::to_string(rank_) + ": ").c_str() : "", why.c_str());
    end_job(code);
}

void World::abort_together(const std::string& why, int code) const {
    if (is_root()) std::fprintf(stderr, "error: %s\n", why.c_str());
    std::fflush(nullptr);
    barrier();  // rank 0 has printed before any rank ends (mpirun then stops the rest)
    end_job(code);
}

void World::end_job(int code) const {
    code = code ? code : 1;
    if (!mpi_) std::exit(code);
    // Leave without MPI_Finalize: mpirun sees a rank end non-zero and stops the others (about a second
    // later), whatever MPI call they wait in. Not MPI_Abort: OpenMPI 4.1.4's mpirun crashes (SIGSEGV)
    // handling two ranks' aborts when malloc perturbation is on (MALLOC_PERTURB_, as meson test sets).
    std::fflush(nullptr);
    std::_Exit(code);
}

void World::barrier() const {
    if (mpi_) MPI_Barrier(MPI_COMM_WORLD);
}

void World::broadcast(std::span<Tensor* const> tensors) const {
    if (size_ == 1) return;
    for (std::size_t t = 0; t < tensors.size(); ++t) {
        Tensor& x = *tensors[t];
        unsigned long long count = x.size();
        MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        if (count != x.size())
            abort("dist::World::broadcast: tensor " + std::to_string(t) + " has shape " + to_string(x.shape()) + " here but " +
                  std::to_string(count) + " elements on rank 0");
        for (std::size_t at = 0; at < x.size(); at += piece)
            MPI_Bcast(x.data() + at, as_count(std::min(piece, x.size() - at)), MPI_FLOAT, 0, MPI_COMM_WORLD);
    }
}

void World::broadcast_from(std::span<Tensor* const> tensors, std::span<const std::size_t> roots) const {
    if (size_ == 1) return;
    if (roots.size() != tensors.size())
        throw std::logic_error("dist::World::broadcast_from: " + std::to_string(roots.size()) + " roots for " +
                               std::to_string(tensors.size()) + " tensors");
    std::vector<MPI_Request> requests;  // all in flight at once: MPI orders collectives by their start
    for (std::size_t t = 0; t < tensors.size(); ++t) {
        Tensor& x = *tensors[t];
        for (std::size_t at = 0; at < x.size(); at += piece) {
            requests.emplace_back();
            MPI_Ibcast(x.data() + at, as_count(std::min(piece, x.size() - at)), MPI_FLOAT, static_cast<int>(roots[t]),
                       MPI_COMM_WORLD, &requests.back());
        }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

namespace {
template <class T>
MPI_Datatype mpi_type() {
    return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

// Rank r receives every rank's slice r of each piece (MPI_Alltoallv only moves bytes), sums it in rank
// order starting from +0, and every rank gathers the summed slices.
template <class T>
void ordered_sum(const World& world, std::span<T> values) {
    const std::size_t N = world.size(), rank = world.rank();
    if (N == 1) {
        for (T& v : values) v = T(0) + v;  // as N ranks start every sum: −0 becomes +0
        return;
    }
    check_same_count(world, values.size(), "dist::World::sum_in_rank_order");
    std::vector<int> send_counts(N), send_starts(N), receive_counts(N), receive_starts(N);
    std::vector<T> parts;
    for (std::size_t at = 0; at < values.size(); at += piece) {
        const std::size_t n = std::min(piece, values.size() - at);
        T* x = values.data() + at;
        const std::size_t mine = slice_start(n, N, rank + 1) - slice_start(n, N, rank);
        for (std::size_t s = 0; s < N; ++s) {
            send_counts[s] = as_count(slice_start(n, N, s + 1) - slice_start(n, N, s));
            send_starts[s] = as_count(slice_start(n, N, s));
            receive_counts[s] = as_count(mine);
            receive_starts[s] = as_count(mine * s);
        }
        parts.resize(mine * N);
        MPI_Alltoallv(x, send_counts.data(), send_starts.data(), mpi_type<T>(), parts.data(), receive_counts.data(),
                      receive_starts.data(), mpi_type<T>(), MPI_COMM_WORLD);
        T* sum = x + slice_start(n, N, rank);
        for (std::size_t i = 0; i < mine; ++i) {
            T a = 0;
            for (std::size_t s = 0; s < N; ++s) a += parts[s * mine + i];
            sum[i] = a;
        }
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, send_counts.data(), send_starts.data(), mpi_type<T>(),
                       MPI_COMM_WORLD);
    }
}
}  // namespace

void World::sum_in_rank_order(std::span<float> values) const { ordered_sum(*this, values); }
void World::sum_in_rank_order(std::span<double> values) const { ordered_sum(*this, values); }

std::vector<float> World::all_gather(std::span<const float> mine) const {
    if (size_ == 1) return {mine.begin(), mine.end()};
    check_same_count(*this, mine.size(), "dist::World::all_gather");
    std::vector<float> all(mine.size() * size_);
    MPI_Allgather(mine.data(), as_count(mine.size()), MPI_FLOAT, all.data(), as_count(mine.size()), MPI_FLOAT,
                  MPI_COMM_WORLD);
    return all;
}

std::vector<std::string> World::all_gather(const std::string& mine) const {
    if (size_ == 1) return {mine};
    const unsigned long long length = mine.size();
    std::vector<unsigned long long> lengths(size_);
    MPI_Allgather(&length, 1, MPI_UNSIGNED_LONG_LONG, lengths.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
    std::vector<int> counts(size_), starts(size_);
    unsigned long long total = 0;
    for (std::size_t r = 0; r < size_; ++r) {
        if (total + lengths[r] > static_cast<unsigned long long>(std::numeric_limits<int>::max()))
            abort("dist::World::all_gather: the ranks' texts exceed 2 GiB together");
        starts[r] = static_cast<int>(total);
        counts[r] = static_cast<int>(lengths[r]);
        total += lengths[r];
    }
    std::string joined(total, '\0');
    MPI_Allgatherv(mine.data(), as_count(mine.size()), MPI_CHAR, joined.data(), counts.data(), starts.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> all(size_);
    for (std::size_t r = 0; r < size_; ++r) all[r] = joined.substr(static_cast<std::size_t>(starts[r]), lengths[r]);
    return all;
}

double World::sum_in_rank_order(double value) const {
    if (size_ == 1) return 0.0 + value;
    std::vector<double> all(size_);
    MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
    double sum = 0.0;
    for (double v : all) sum += v;
    return sum;
}

}  // namespace remat::dist
