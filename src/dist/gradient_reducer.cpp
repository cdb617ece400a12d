#include "remat/dist/gradient_reducer.hpp"

#define OMPI_SKIP_MPICXX 1  // the deprecated C++ bindings do not compile cleanly at remat's warning level
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "remat/core/error.hpp"

namespace remat::dist {

namespace {
// MPI counts are ints: a message carries at most this many floats.
constexpr std::size_t piece_limit = std::size_t{1} << 28;

// A run of a bucket's elements that lies in one tensor (or the bucket's flags).
struct Piece {
    float* data;
    std::size_t count;
};

// out[e] = 0 + terms[0][e] + terms[1][e] + … in that order (out may be one of the terms), in blocks
// that stay in cache, each a loop the compiler vectorises.
void add_in_order(const std::vector<const float*>& terms, float* out, std::size_t n) {
    constexpr std::size_t block = 2048;
    float sum[block];
    for (std::size_t at = 0; at < n; at += block) {
        const std::size_t m = std::min(block, n - at);
        const float* first = terms[0] + at;
        for (std::size_t e = 0; e < m; ++e) sum[e] = 0.0f + first[e];
        for (std::size_t s = 1; s < terms.size(); ++s) {
            const float* x = terms[s] + at;
            for (std::size_t e = 0; e < m; ++e) sum[e] += x[e];
        }
        std::copy(sum, sum + m, out + at);
    }
}

// Slice s of n elements over N ranks: [n·s/N, n·(s+1)/N), summed by rank s.
std::size_t slice_start(std::size_t n, std::size_t ranks, std::size_t s) { return n * s / ranks; }
}  // namespace

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
    double wait_seconds = 0;

    State(const World& w, std::vector<Param*> p, std::vector<std::size_t> o)
        : world(w), ranks(w.size()), rank(w.rank()), params(std::move(p)), owners(std::move(o)) {}

    bool owns(std::size_t param) const { return owners.empty() || owners[param] == rank; }

    // The bucket's elements [a, b) as runs in the tensors they live in.
    std::vector<Piece> pieces(Bucket& bucket, std::size_t a, std::size_t b) const {
        std::vector<Piece> out;
        auto add = [&](float* data, std::size_t count) {
            for (std::size_t at = 0; at < count; at += piece_limit) out.push_back({data + at, std::min(piece_limit, count - at)});
        };
        const std::size_t gradients = bucket.length - bucket.members.size();
        for (const Member& m : bucket.members) {
            const std::size_t lo = std::max(a, m.offset), hi = std::min(b, m.offset + m.size);
            if (lo < hi) add(gradient[m.param]->data() + (lo - m.offset), hi - lo);
        }
        const std::size_t lo = std::max(a, gradients), hi = std::min(b, bucket.length);
        if (lo < hi) add(bucket.flags.data() + (lo - gradients), hi - lo);
        return out;
    }

    std::size_t slice_size(const Bucket& bucket, std::size_t s) const {
        return slice_start(bucket.length, ranks, s + 1) - slice_start(bucket.length, ranks, s);
    }
    int tag(std::size_t b, int phase) const { return static_cast<int>(2 * b) + phase; }

    // Scatter: rank s gets every rank's slice s.
    void start(std::size_t b) {
        if (!owners.empty()) return start_to_owners(b);
        Bucket& bucket = buckets[b];
        const std::size_t mine = slice_size(bucket, rank);
        bucket.received.resize(mine * (ranks - 1));
        bucket.requests.clear();
        for (std::size_t s = 0; s < ranks; ++s) {
            if (s == rank) continue;
            for (const Piece& p : pieces(bucket, slice_start(bucket.length, ranks, s), slice_start(bucket.length, ranks, s + 1)))
                send(bucket, p.data, p.count, s, tag(b, 0));
            float* into = bucket.received.data() + mine * (s < rank ? s : s - 1);
            for (const Piece& p : pieces(bucket, slice_start(bucket.length, ranks, rank), slice_start(bucket.length, ranks, rank + 1))) {
                receive(bucket, into, p.count, s, tag(b, 0));
                into += p.count;
            }
        }
        bucket.phase = Phase::scattering;
    }

    // This rank's slice ← 0 + x₀ + x₁ + … in rank order; then every rank gets every summed slice.
    void sum_and_gather(std::size_t b) {
        Bucket& bucket = buckets[b];
        const std::size_t mine = slice_size(bucket, rank);
        const std::size_t first = slice_start(bucket.length, ranks, rank), last = first + mine;
        std::size_t at = 0;  // position in the slice
        std::vector<const float*> terms(ranks);
        for (const Piece& p : pieces(bucket, first, last)) {
            for (std::size_t s = 0; s < ranks; ++s)
                terms[s] = s == rank ? p.data : bucket.received.data() + mine * (s < rank ? s : s - 1) + at;
            add_in_order(terms, p.data, p.count);
            at += p.count;
        }
        bucket.requests.clear();
        for (std::size_t s = 0; s < ranks; ++s) {
            if (s == rank) continue;
            for (const Piece& p : pieces(bucket, first, last)) send(bucket, p.data, p.count, s, tag(b, 1));
            for (const Piece& p : pieces(bucket, slice_start(bucket.length, ranks, s), slice_start(bucket.length, ranks, s + 1)))
                receive(bucket, p.data, p.count, s, tag(b, 1));
        }
        bucket.phase = Phase::gathering;
    }

    // ZeRO-1: every member's gradient goes to its owner alone, which keeps the other ranks' copies in
    // `received` (per owned member, in member order, the other ranks' in rank order).
    void start_to_owners(std::size_t b) {
        Bucket& bucket = buckets[b];
        std::size_t owned = 0;
        for (const Member& m : bucket.members)
            if (owns(m.param)) owned += m.size;
        bucket.received.resize(owned * (ranks - 1));
        bucket.requests.clear();
        float* into = bucket.received.data();
        for (const Member& m : bucket.members) {
            float* g = gradient[m.param]->data();
            if (!owns(m.param)) {
                for (std::size_t at = 0; at < m.size; at += piece_limit)
                    send(bucket, g + at, std::min(piece_limit, m.size - at), owners[m.param], tag(b, 0));
                continue;
            }
            for (std::size_t s = 0; s < ranks; ++s) {
                if (s == rank) continue;
                for (std::size_t at = 0; at < m.size; at += piece_limit) {
                    const std::size_t count = std::min(piece_limit, m.size - at);
                    receive(bucket, into, count, s, tag(b, 0));
                    into += count;
                }
            }
        }
        bucket.phase = Phase::scattering;
    }

    // ZeRO-1: each owned member ← 0 + x₀ + x₁ + … in rank order; nothing to send back.
    void sum_owned(std::size_t b) {
        Bucket& bucket = buckets[b];
        const float* copies = bucket.received.data();
        std::vector<const float*> terms(ranks);
        for (const Member& m : bucket.members) {
            if (!owns(m.param)) continue;
            float* g = gradient[m.param]->data();
            for (std::size_t s = 0; s < ranks; ++s) terms[s] = s == rank ? g : copies + m.size * (s < rank ? s : s - 1);
            add_in_order(terms, g, m.size);
            copies += m.size * (ranks - 1);
        }
        bucket.requests.clear();
        bucket.phase = Phase::done;
    }

    void send(Bucket& bucket, float* data, std::size_t count, std::size_t to, int t) {
        bucket.requests.emplace_back();
        MPI_Isend(data, static_cast<int>(count), MPI_FLOAT, static_cast<int>(to), t, comm, &bucket.requests.back());
    }
    void receive(Bucket& bucket, float* data, std::size_t count, std::size_t from, int t) {
        bucket.requests.emplace_back();
        MPI_Irecv(data, static_cast<int>(count), MPI_FLOAT, static_cast<int>(from), t, comm, &bucket.requests.back());
    }

    // Moves bucket b to its next phase once its messages are through (waiting for them if asked).
    void advance(std::size_t b, bool wait) {
        Bucket& bucket = buckets[b];
        while (bucket.phase == Phase::scattering || bucket.phase == Phase::gathering) {
            int through = 0;
            if (wait) {
                MPI_Waitall(static_cast<int>(bucket.requests.size()), bucket.requests.data(), MPI_STATUSES_IGNORE);
                through = 1;
            } else {
                MPI_Testall(static_cast<int>(bucket.requests.size()), bucket.requests.data(), &through, MPI_STATUSES_IGNORE);
            }
            if (!through) return;
            if (bucket.phase == Phase::scattering && !owners.empty()) {
                sum_owned(b);
            } else if (bucket.phase == Phase::scattering) {
                sum_and_gather(b);
            } else {
                bucket.requests.clear();
                bucket.phase = Phase::done;
            }
            if (!wait) return;  // one phase per call: progress() stays short
        }
    }
};

namespace {
// Ends the job unless every rank has the same parameter shapes (their sums would pair wrong elements).
void check_same_parameters(const World& world, MPI_Comm comm, const std::vector<Param*>& params) {
    unsigned long long hash = 1469598103934665603ull;  // FNV-1a over the trained parameters' sizes
    for (const Param* p : params) {
        const unsigned long long size = p->frozen ? ~0ull : p->value.size();
        for (int byte = 0; byte < 8; ++byte) hash = (hash ^ ((size >> (8 * byte)) & 0xff)) * 1099511628211ull;
    }
    unsigned long long values[2] = {hash, ~hash};  // max of both: every rank's hash equal iff max = min
    MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    if (values[0] != hash || ~values[1] != hash)
        world.abort("dist::GradientReducer: the parameters (" + std::to_string(params.size()) +
                    " here) differ in number, size or frozen state from another rank's");
}
}  // namespace

GradientReducer::GradientReducer(const World& world, std::vector<Param*> params, std::size_t bucket_bytes,
                                 std::vector<std::size_t> owners)
    : state_(std::make_unique<State>(world, std::move(params), std::move(owners))) {
    State& st = *state_;
    const std::size_t n = st.params.size();
    if (!st.owners.empty() && st.owners.size() != n)
        throw std::invalid_argument("dist::GradientReducer: " + std::to_string(st.owners.size()) + " owners for " +
                                    std::to_string(n) + " parameters");
    for (std::size_t o : st.owners)
        if (o >= st.ranks) throw std::invalid_argument("dist::GradientReducer: owner rank " + std::to_string(o) + " of " +
                                                       std::to_string(st.ranks) + " ranks");
    st.bucket_of.assign(n, -1);
    st.member_of.assign(n, 0);
    st.gradient.assign(n, nullptr);
    st.is_ready.assign(n, false);
    st.spare.resize(n);
    if (st.ranks == 1) return;
    MPI_Comm_dup(MPI_COMM_WORLD, &st.comm);
    check_same_parameters(world, st.comm, st.params);
    const std::size_t limit = std::max<std::size_t>(1, bucket_bytes / sizeof(float));
    for (std::size_t i = n; i-- > 0;) {
        if (st.params[i]->frozen) continue;
        if (st.buckets.empty() || st.buckets.back().length >= limit) st.buckets.emplace_back();
        State::Bucket& bucket = st.buckets.back();
        st.bucket_of[i] = static_cast<std::ptrdiff_t>(st.buckets.size() - 1);
        st.member_of[i] = bucket.members.size();
        bucket.members.push_back({i, bucket.length, st.params[i]->value.size()});
        bucket.length += st.params[i]->value.size();
    }
    for (State::Bucket& bucket : st.buckets) {
        bucket.flags.assign(bucket.members.size(), 0.0f);
        bucket.length += bucket.members.size();
        bucket.waiting = bucket.members.size();
    }
    int* tag_limit = nullptr;  // each bucket takes two message tags
    int found = 0;
    MPI_Comm_get_attr(st.comm, MPI_TAG_UB, &tag_limit, &found);
    const std::size_t tags = found && tag_limit ? static_cast<std::size_t>(*tag_limit) : 32767;  // 32767: MPI's minimum
    if (st.buckets.size() > tags / 2)
        world.abort("dist::GradientReducer: " + std::to_string(st.buckets.size()) + " buckets of " + std::to_string(bucket_bytes) +
                    " bytes need more message tags than MPI's " + std::to_string(tags) + "; use larger buckets");
}

GradientReducer::~GradientReducer() {
    if (state_->comm == MPI_COMM_NULL) return;
    // A step abandoned half way (an exception) leaves messages in flight: the job is ending anyway,
    // and freeing the communicator under them would be wrong.
    for (const State::Bucket& bucket : state_->buckets)
        if (!bucket.requests.empty()) return;
    MPI_Comm_free(&state_->comm);
}

void GradientReducer::ready(std::size_t i, Tensor* gradient) {
    State& st = *state_;
    if (i >= st.params.size()) throw std::out_of_range("dist::GradientReducer::ready: parameter " + std::to_string(i) +
                                                       " of " + std::to_string(st.params.size()));
    if (st.is_ready[i]) throw std::logic_error("dist::GradientReducer::ready: parameter " + std::to_string(i) + " was already ready this step");
    st.is_ready[i] = true;
    st.gradient[i] = gradient;
    if (st.bucket_of[i] < 0 && st.ranks > 1) return;  // frozen
    if (st.ranks == 1) {  // the sum of one rank: +0 + g, as World::sum_in_rank_order gives
        if (gradient && !st.params[i]->frozen)
            for (float& v : *gradient) v = 0.0f + v;
        return;
    }
    if (gradient && gradient->size() != st.params[i]->value.size())
        throw ShapeError("dist::GradientReducer::ready: parameter " + std::to_string(i) + "'s gradient has shape " +
                         to_string(gradient->shape()) + ", the parameter " + to_string(st.params[i]->value.shape()));
    const auto b = static_cast<std::size_t>(st.bucket_of[i]);
    State::Bucket& bucket = st.buckets[b];
    if (!gradient) {  // contributes zeros, and takes the sum if another rank has a gradient
        Tensor& spare = st.spare[i];
        if (spare.shape() != st.params[i]->value.shape()) spare = Tensor::from_shape(st.params[i]->value.shape());
        std::fill(spare.begin(), spare.end(), 0.0f);
        st.gradient[i] = &spare;
    }
    bucket.flags[st.member_of[i]] = gradient ? 1.0f : 0.0f;
    if (--bucket.waiting == 0) st.start(b);
}

void GradientReducer::progress() {
    State& st = *state_;
    for (std::size_t b = 0; b < st.buckets.size(); ++b) st.advance(b, false);
}

std::vector<Tensor*> GradientReducer::finish() {
    State& st = *state_;
    for (std::size_t i = 0; i < st.params.size(); ++i)
        if (!st.is_ready[i]) ready(i, nullptr);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t b = 0; b < st.buckets.size(); ++b) st.advance(b, true);
    st.wait_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<Tensor*> sums(st.params.size(), nullptr);
    for (std::size_t i = 0; i < st.params.size(); ++i) {
        if (st.ranks == 1) {
            sums[i] = st.params[i]->frozen ? nullptr : st.gradient[i];
        } else if (st.bucket_of[i] >= 0 && !st.owners.empty()) {
            sums[i] = st.owns(i) ? st.gradient[i] : nullptr;  // zeros where no rank had a gradient: the same update
        } else if (st.bucket_of[i] >= 0) {
            const State::Bucket& bucket = st.buckets[static_cast<std::size_t>(st.bucket_of[i])];
            sums[i] = bucket.flags[st.member_of[i]] > 0.0f ? st.gradient[i] : nullptr;
        }
    }
    for (State::Bucket& bucket : st.buckets) {
        bucket.waiting = bucket.members.size();
        bucket.phase = State::Phase::collecting;
    }
    std::fill(st.is_ready.begin(), st.is_ready.end(), false);
    std::fill(st.gradient.begin(), st.gradient.end(), nullptr);
    return sums;
}

std::size_t GradientReducer::bucket_count() const { return state_->buckets.size(); }
double GradientReducer::last_wait_seconds() const { return state_->wait_seconds; }

}  // namespace remat::dist
