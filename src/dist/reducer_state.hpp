#pragma once
// GradientReducer's insides, for the files that implement it: gradient_reducer.cpp (the calls
// backward makes), reducer_buckets.cpp (buckets summed by reduce-scatter and all-gather, or sent to
// their owners) and reducer_split_rows.cpp (a lookup table summed in two parts).
#define OMPI_SKIP_MPICXX 1  // the deprecated C++ bindings do not compile cleanly at remat's warning level
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "remat/dist/gradient_reducer.hpp"

namespace remat::dist {

// MPI counts are ints: a message carries at most this many floats.
inline constexpr std::size_t piece_limit = std::size_t{1} << 28;

// A run of a bucket's elements that lies in one tensor (or the bucket's flags).
struct Piece {
    float* data;
    std::size_t count;
};

struct GradientReducer::State {
    struct Member {
        std::size_t param;
        std::size_t offset;  // of its first element in the bucket
        std::size_t size;
    };
    enum class Phase { collecting, scattering, gathering, done };
    struct Bucket {
        std::vector<Member> members;  // in reverse parameter order, then one flag per member
        std::size_t length = 0;       // elements, flags included
        std::vector<float> flags;     // 1 where this rank has the member's gradient: their sum says whether any rank has
        std::size_t waiting = 0;      // members not yet ready this step
        Phase phase = Phase::collecting;
        std::vector<float> received;  // the other ranks' copies of this rank's slice, in rank order
        std::vector<MPI_Request> requests;
        bool is_split = false;        // one member: some rows of a split parameter, the `runs` of them
        std::vector<Piece> runs;      // consecutive rows, where they are
    };
    // A table summed in two parts (ready_except_rows): the rows no rank's lookups still add to,
    // as soon as every rank knows which those are, and the others once the table is ready.
    struct Split {
        bool active = false;      // this step: every rank told ready_except_rows last step
        bool reported = false;    // this rank was told ready_except_rows this step
        std::size_t rows = 0, row_size = 0;
        std::vector<unsigned char> late;                 // per row, 1 where a rank's lookups still add
        std::vector<std::vector<unsigned char>> theirs;  // the other ranks' `late`, in rank order
        std::vector<MPI_Request> requests;               // exchanging `late`
        bool union_started = false, union_known = false;
        Tensor* early_source = nullptr;                  // the gradient told of early; null: zeros so far
        Tensor* early_rows = nullptr;                    // where the early rows are summed
        std::size_t early = 0, late_bucket = 0;          // their buckets
        bool early_started = false, late_started = false;
    };

    const World& world;
    std::size_t ranks, rank;
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<Param*> params;
    std::vector<std::size_t> owners;        // per parameter, the rank that gets its sum; empty: every rank
    std::vector<std::ptrdiff_t> bucket_of;  // per parameter; −1: frozen
    std::vector<std::size_t> member_of;     // its index in its bucket
    std::vector<Bucket> buckets;
    std::vector<Tensor*> gradient;          // per parameter, this step: where its sum goes
    std::vector<bool> is_ready;
    std::vector<Tensor> spare;              // zeros for a parameter this rank has no gradient for
    std::vector<Split> split;               // per parameter
    std::vector<std::size_t> in_flight;     // buckets started and not yet done
    std::vector<MPI_Request> all_requests;  // theirs, for one test
    std::vector<int> completed_indices;
    std::size_t bucket_bytes = 0, whole_buckets = 0;  // buckets[0, whole_buckets) hold whole parameters
    double wait_seconds = 0;

    State(const World& w, std::vector<Param*> p, std::vector<std::size_t> o)
        : world(w), ranks(w.size()), rank(w.rank()), params(std::move(p)), owners(std::move(o)) {}

    bool owns(std::size_t param) const { return owners.empty() || owners[param] == rank; }

    // The bucket's elements [a, b) as runs in the tensors they live in.
    std::vector<Piece> pieces(const Bucket& bucket, std::size_t a, std::size_t b) const;

    // The messages that carry `pieces`, in order: one per piece of whole tensors (MPI sends contiguous
    // memory as it is); a split parameter's many runs of rows gathered into as few as MPI's int
    // counts allow (a datatype: MPI copies the runs in its pipeline).
    static std::vector<std::vector<Piece>> messages(const Bucket& bucket, const std::vector<Piece>& pieces);
    static std::size_t total(const std::vector<Piece>& message);

    std::size_t slice_size(const Bucket& bucket, std::size_t s) const;
    int tag(std::size_t b, int phase) const { return static_cast<int>(2 * b) + phase; }
    int union_tag(std::size_t param) const { return static_cast<int>(2 * buckets.size() + param); }

    // Scatter: rank s gets every rank's slice s.
    void start(std::size_t b);

    std::vector<Piece> slice(const Bucket& bucket, std::size_t s) const;

    // This rank's slice ← 0 + x₀ + x₁ + … in rank order; then every rank gets every summed slice.
    void sum_and_gather(std::size_t b);

    // ZeRO-1: every member's gradient goes to its owner alone, which keeps the other ranks' copies in
    // `received` (per owned member, in member order, the other ranks' in rank order).
    void start_to_owners(std::size_t b);

    // ZeRO-1: each owned member ← 0 + x₀ + x₁ + … in rank order; nothing to send back.
    void sum_owned(std::size_t b);

    // Sends or receives one message: a piece as it is, several as one MPI datatype of their addresses.
    void post(Bucket& bucket, const std::vector<Piece>& message, std::size_t peer, int t, bool sending);

    // Bucket b's messages are through: its next phase.
    void next_phase(std::size_t b);

    // Waits for bucket b's sum.
    void wait_for(std::size_t b);

    // Moves each bucket in flight whose messages are through to its next phase. One test of all
    // their messages: each test drives MPI's transfers and polls its sockets, a system call.
    void advance_in_flight();

    // Buckets of whole parameters in reverse order, about bucket_bytes each, leaving out the split
    // ones; then two buckets per split parameter (its early rows and its late rows). The same on every rank.
    void lay_out();

    // Sends this rank's late rows to every other rank and receives theirs.
    void start_union(std::size_t i);

    // Starts bucket b with the early (or late) rows of `rows`, summed where they are, and this rank's flag.
    void start_rows(std::size_t i, std::size_t b, Tensor* rows, bool late_rows, float flag);

    // Zeros of parameter i's shape: what this rank adds where it has no gradient.
    Tensor* zeros_for(std::size_t i);

    // Moves split parameter i along: its late rows known from every rank (waiting for them if
    // asked), its early rows sent, its late rows sent once it is ready.
    void advance_split(std::size_t i, bool wait);

    // After the sums: split parameter i's step gradient, its early rows' sums moved next to the
    // late ones' if they were summed elsewhere.
    Tensor* gather_rows(std::size_t i);

    // Ranks split a parameter from the step after every rank was told ready_except_rows for it, and
    // keep splitting it: they agree which parameters are split whatever any one rank is told later
    // (a rank not told takes part at ready(), with no rows of its own to come).
    void agree_on_splits();
};

}  // namespace remat::dist
