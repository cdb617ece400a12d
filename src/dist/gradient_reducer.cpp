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
    std::vector<Piece> pieces(const Bucket& bucket, std::size_t a, std::size_t b) const {
        std::vector<Piece> out;
        auto add = [&](float* data, std::size_t count) {
            for (std::size_t at = 0; at < count; at += piece_limit) out.push_back({data + at, std::min(piece_limit, count - at)});
        };
        const std::size_t gradients = bucket.length - bucket.members.size();
        auto add_overlap = [&](float* data, std::size_t offset, std::size_t size) {
            const std::size_t lo = std::max(a, offset), hi = std::min(b, offset + size);
            if (lo < hi) add(data + (lo - offset), hi - lo);
        };
        if (bucket.is_split) {
            std::size_t offset = 0;
            for (const Piece& run : bucket.runs) {
                add_overlap(run.data, offset, run.count);
                offset += run.count;
            }
        } else {
            for (const Member& m : bucket.members) add_overlap(gradient[m.param]->data(), m.offset, m.size);
        }
        add_overlap(const_cast<float*>(bucket.flags.data()), gradients, bucket.members.size());
        return out;
    }

    // The messages that carry `pieces`, in order: one per piece of whole tensors (MPI sends contiguous
    // memory as it is); a split parameter's many runs of rows gathered into as few as MPI's int
    // counts allow (a datatype: MPI copies the runs in its pipeline).
    static std::vector<std::vector<Piece>> messages(const Bucket& bucket, const std::vector<Piece>& pieces) {
        std::vector<std::vector<Piece>> out;
        std::size_t total = 0;
        for (const Piece& p : pieces) {
            if (out.empty() || !bucket.is_split || total + p.count > piece_limit) {
                out.emplace_back();
                total = 0;
            }
            out.back().push_back(p);
            total += p.count;
        }
        return out;
    }
    static std::size_t total(const std::vector<Piece>& message) {
        std::size_t n = 0;
        for (const Piece& p : message) n += p.count;
        return n;
    }

    std::size_t slice_size(const Bucket& bucket, std::size_t s) const {
        return slice_start(bucket.length, ranks, s + 1) - slice_start(bucket.length, ranks, s);
    }
    int tag(std::size_t b, int phase) const { return static_cast<int>(2 * b) + phase; }
    int union_tag(std::size_t param) const { return static_cast<int>(2 * buckets.size() + param); }

    // Scatter: rank s gets every rank's slice s.
    void start(std::size_t b) {
        in_flight.push_back(b);
        if (!owners.empty()) return start_to_owners(b);
        Bucket& bucket = buckets[b];
        const std::size_t mine = slice_size(bucket, rank);
        bucket.received.resize(mine * (ranks - 1));
        bucket.requests.clear();
        for (std::size_t s = 0; s < ranks; ++s) {
            if (s == rank) continue;
            for (const auto& message : messages(bucket, slice(bucket, s))) post(bucket, message, s, tag(b, 0), true);
            float* into = bucket.received.data() + mine * (s < rank ? s : s - 1);
            for (const auto& message : messages(bucket, slice(bucket, rank))) {
                post(bucket, {{into, total(message)}}, s, tag(b, 0), false);
                into += total(message);
            }
        }
        bucket.phase = Phase::scattering;
    }

    std::vector<Piece> slice(const Bucket& bucket, std::size_t s) const {
        return pieces(bucket, slice_start(bucket.length, ranks, s), slice_start(bucket.length, ranks, s + 1));
    }

    // This rank's slice ← 0 + x₀ + x₁ + … in rank order; then every rank gets every summed slice.
    void sum_and_gather(std::size_t b) {
        Bucket& bucket = buckets[b];
        const std::size_t mine = slice_size(bucket, rank);
        std::size_t at = 0;  // position in the slice
        std::vector<const float*> terms(ranks);
        for (const Piece& p : slice(bucket, rank)) {
            for (std::size_t s = 0; s < ranks; ++s)
                terms[s] = s == rank ? p.data : bucket.received.data() + mine * (s < rank ? s : s - 1) + at;
            add_in_order(terms, p.data, p.count);
            at += p.count;
        }
        bucket.requests.clear();
        for (std::size_t s = 0; s < ranks; ++s) {
            if (s == rank) continue;
            for (const auto& message : messages(bucket, slice(bucket, rank))) post(bucket, message, s, tag(b, 1), true);
            for (const auto& message : messages(bucket, slice(bucket, s))) post(bucket, message, s, tag(b, 1), false);
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
            const auto all = messages(bucket, pieces(bucket, m.offset, m.offset + m.size));
            if (!owns(m.param)) {
                for (const auto& message : all) post(bucket, message, owners[m.param], tag(b, 0), true);
                continue;
            }
            for (std::size_t s = 0; s < ranks; ++s) {
                if (s == rank) continue;
                for (const auto& message : all) {
                    post(bucket, {{into, total(message)}}, s, tag(b, 0), false);
                    into += total(message);
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
            std::size_t at = 0;
            for (const Piece& p : pieces(bucket, m.offset, m.offset + m.size)) {
                for (std::size_t s = 0; s < ranks; ++s) terms[s] = s == rank ? p.data : copies + m.size * (s < rank ? s : s - 1) + at;
                add_in_order(terms, p.data, p.count);
                at += p.count;
            }
            copies += m.size * (ranks - 1);
        }
        bucket.requests.clear();
        bucket.phase = Phase::done;
    }

    // Sends or receives one message: a piece as it is, several as one MPI datatype of their addresses.
    void post(Bucket& bucket, const std::vector<Piece>& message, std::size_t peer, int t, bool sending) {
        bucket.requests.emplace_back();
        MPI_Request* request = &bucket.requests.back();
        const int to = static_cast<int>(peer);
        if (message.size() == 1) {
            const int count = static_cast<int>(message[0].count);
            sending ? MPI_Isend(message[0].data, count, MPI_FLOAT, to, t, comm, request)
                    : MPI_Irecv(message[0].data, count, MPI_FLOAT, to, t, comm, request);
            return;
        }
        std::vector<int> lengths;
        std::vector<MPI_Aint> places;
        for (const Piece& p : message) {
            lengths.push_back(static_cast<int>(p.count));
            places.emplace_back();
            MPI_Get_address(p.data, &places.back());
        }
        MPI_Datatype runs;
        MPI_Type_create_hindexed(static_cast<int>(message.size()), lengths.data(), places.data(), MPI_FLOAT, &runs);
        MPI_Type_commit(&runs);
        sending ? MPI_Isend(MPI_BOTTOM, 1, runs, to, t, comm, request) : MPI_Irecv(MPI_BOTTOM, 1, runs, to, t, comm, request);
        MPI_Type_free(&runs);  // MPI keeps it until the message is through
    }

    // Bucket b's messages are through: its next phase.
    void next_phase(std::size_t b) {
        Bucket& bucket = buckets[b];
        if (bucket.phase == Phase::scattering && !owners.empty()) {
            sum_owned(b);
        } else if (bucket.phase == Phase::scattering) {
            sum_and_gather(b);
        } else {
            bucket.requests.clear();
            bucket.phase = Phase::done;
        }
    }

    // Waits for bucket b's sum.
    void wait_for(std::size_t b) {
        Bucket& bucket = buckets[b];
        while (bucket.phase == Phase::scattering || bucket.phase == Phase::gathering) {
            MPI_Waitall(static_cast<int>(bucket.requests.size()), bucket.requests.data(), MPI_STATUSES_IGNORE);
            next_phase(b);
        }
    }

    // Moves each bucket in flight whose messages are through to its next phase. One test of all
    // their messages: each test drives MPI's transfers and polls its sockets, a system call.
    void advance_in_flight() {
        all_requests.clear();
        for (std::size_t b : in_flight) all_requests.insert(all_requests.end(), buckets[b].requests.begin(), buckets[b].requests.end());
        int completed = 0;
        completed_indices.resize(all_requests.size());
        if (!all_requests.empty())
            MPI_Testsome(static_cast<int>(all_requests.size()), all_requests.data(), &completed, completed_indices.data(),
                         MPI_STATUSES_IGNORE);
        auto request = all_requests.begin();
        for (std::size_t b : in_flight) {  // completed requests came back as MPI_REQUEST_NULL
            std::vector<MPI_Request>& mine = buckets[b].requests;
            std::copy(request, request + static_cast<std::ptrdiff_t>(mine.size()), mine.begin());
            request += static_cast<std::ptrdiff_t>(mine.size());
        }
        for (std::size_t b : in_flight) {
            const std::vector<MPI_Request>& mine = buckets[b].requests;
            if (std::all_of(mine.begin(), mine.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; })) next_phase(b);
        }
        std::erase_if(in_flight, [&](std::size_t b) { return buckets[b].phase == Phase::done; });
    }

    // Buckets of whole parameters in reverse order, about bucket_bytes each, leaving out the split
    // ones; then two buckets per split parameter (its early rows and its late rows). The same on every rank.
    void lay_out() {
        buckets.clear();
        const std::size_t limit = std::max<std::size_t>(1, bucket_bytes / sizeof(float));
        std::fill(bucket_of.begin(), bucket_of.end(), -1);
        for (std::size_t i = params.size(); i-- > 0;) {
            if (params[i]->frozen || split[i].active) continue;
            if (buckets.empty() || buckets.back().length >= limit) buckets.emplace_back();
            Bucket& bucket = buckets.back();
            bucket_of[i] = static_cast<std::ptrdiff_t>(buckets.size() - 1);
            member_of[i] = bucket.members.size();
            bucket.members.push_back({i, bucket.length, params[i]->value.size()});
            bucket.length += params[i]->value.size();
        }
        for (Bucket& bucket : buckets) {
            bucket.flags.assign(bucket.members.size(), 0.0f);
            bucket.length += bucket.members.size();
            bucket.waiting = bucket.members.size();
        }
        whole_buckets = buckets.size();
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (!split[i].active) continue;
            for (std::size_t* b : {&split[i].early, &split[i].late_bucket}) {
                *b = buckets.size();
                buckets.emplace_back().is_split = true;
            }
        }
        int* tag_limit = nullptr;  // each bucket takes two message tags, each split parameter one more
        int found = 0;
        MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_limit, &found);
        const std::size_t tags = found && tag_limit ? static_cast<std::size_t>(*tag_limit) : 32767;  // 32767: MPI's minimum
        if (2 * buckets.size() + params.size() > tags)
            world.abort("dist::GradientReducer: " + std::to_string(buckets.size()) + " buckets of " + std::to_string(bucket_bytes) +
                        " bytes need more message tags than MPI's " + std::to_string(tags) + "; use larger buckets");
    }

    // Sends this rank's late rows to every other rank and receives theirs.
    void start_union(std::size_t i) {
        Split& sp = split[i];
        sp.union_started = true;
        sp.theirs.resize(ranks);
        sp.requests.clear();
        for (std::size_t s = 0; s < ranks; ++s) {
            if (s == rank) continue;
            sp.theirs[s].resize(sp.rows);
            sp.requests.emplace_back();
            MPI_Isend(sp.late.data(), static_cast<int>(sp.rows), MPI_UNSIGNED_CHAR, static_cast<int>(s), union_tag(i), comm,
                      &sp.requests.back());
            sp.requests.emplace_back();
            MPI_Irecv(sp.theirs[s].data(), static_cast<int>(sp.rows), MPI_UNSIGNED_CHAR, static_cast<int>(s), union_tag(i), comm,
                      &sp.requests.back());
        }
    }

    // Starts bucket b with the early (or late) rows of `rows`, summed where they are, and this rank's flag.
    void start_rows(std::size_t i, std::size_t b, Tensor* rows, bool late_rows, float flag) {
        const Split& sp = split[i];
        Bucket& bucket = buckets[b];
        bucket.runs.clear();
        std::size_t size = 0;
        for (std::size_t r = 0; r < sp.rows; ++r) {
            if ((sp.late[r] != 0) != late_rows) continue;
            float* row = rows->data() + r * sp.row_size;
            if (!bucket.runs.empty() && bucket.runs.back().data + bucket.runs.back().count == row)
                bucket.runs.back().count += sp.row_size;
            else
                bucket.runs.push_back({row, sp.row_size});
            size += sp.row_size;
        }
        bucket.members = {{i, 0, size}};
        bucket.flags = {flag};
        bucket.length = size + 1;
        start(b);
    }

    // Zeros of parameter i's shape: what this rank adds where it has no gradient.
    Tensor* zeros_for(std::size_t i) {
        Tensor& t = spare[i];
        if (t.shape() != params[i]->value.shape()) t = Tensor::from_shape(params[i]->value.shape());
        std::fill(t.begin(), t.end(), 0.0f);
        return &t;
    }

    // Moves split parameter i along: its late rows known from every rank (waiting for them if
    // asked), its early rows sent, its late rows sent once it is ready.
    void advance_split(std::size_t i, bool wait) {
        Split& sp = split[i];
        if (!sp.union_started) return;
        if (!sp.union_known) {
            int through = 0;
            if (wait) {
                MPI_Waitall(static_cast<int>(sp.requests.size()), sp.requests.data(), MPI_STATUSES_IGNORE);
                through = 1;
            } else {
                MPI_Testall(static_cast<int>(sp.requests.size()), sp.requests.data(), &through, MPI_STATUSES_IGNORE);
            }
            if (!through) return;
            for (std::size_t s = 0; s < ranks; ++s)
                if (s != rank)
                    for (std::size_t r = 0; r < sp.rows; ++r) sp.late[r] |= sp.theirs[s][r];
            sp.requests.clear();
            sp.union_known = true;
        }
        if (!sp.early_started) {
            sp.early_rows = sp.early_source ? sp.early_source : zeros_for(i);
            start_rows(i, sp.early, sp.early_rows, false, 0.0f);
            sp.early_started = true;
        }
        if (is_ready[i] && !sp.late_started) {
            if (!gradient[i]) gradient[i] = sp.early_source ? nullptr : sp.early_rows;  // zeros (checked at ready)
            start_rows(i, sp.late_bucket, gradient[i], true, gradient[i] == &spare[i] ? 0.0f : 1.0f);
            sp.late_started = true;
        }
    }

    // After the sums: split parameter i's step gradient, its early rows' sums moved next to the
    // late ones' if they were summed elsewhere.
    Tensor* gather_rows(std::size_t i) {
        Split& sp = split[i];
        const bool any = buckets[sp.late_bucket].flags[0] > 0.0f;
        if (!owners.empty() ? !owns(i) : !any) return nullptr;
        Tensor* out = gradient[i];
        if (sp.early_rows != out)
            for (std::size_t r = 0; r < sp.rows; ++r)
                if (!sp.late[r])
                    std::copy_n(sp.early_rows->data() + r * sp.row_size, sp.row_size, out->data() + r * sp.row_size);
        return out;
    }

    // Ranks split a parameter from the step after every rank was told ready_except_rows for it, and
    // keep splitting it: they agree which parameters are split whatever any one rank is told later
    // (a rank not told takes part at ready(), with no rows of its own to come).
    void agree_on_splits() {
        std::vector<unsigned char> all(params.size());
        for (std::size_t i = 0; i < params.size(); ++i) all[i] = split[i].reported ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_UNSIGNED_CHAR, MPI_MIN, comm);
        bool changed = false;
        for (std::size_t i = 0; i < params.size(); ++i) {
            Split& sp = split[i];
            changed = changed || (!sp.active && all[i] != 0);
            sp.active = sp.active || all[i] != 0;
            sp.reported = false;
            sp.union_started = sp.union_known = sp.early_started = sp.late_started = false;
            sp.early_source = sp.early_rows = nullptr;
        }
        if (changed) lay_out();
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
    st.split.resize(n);
    st.bucket_bytes = bucket_bytes;
    if (st.ranks == 1) return;
    MPI_Comm_dup(MPI_COMM_WORLD, &st.comm);
    check_same_parameters(world, st.comm, st.params);
    st.lay_out();
}

GradientReducer::~GradientReducer() {
    if (state_->comm == MPI_COMM_NULL) return;
    // A step abandoned half way (an exception) leaves messages in flight: the job is ending anyway,
    // and freeing the communicator under them would be wrong.
    for (const State::Bucket& bucket : state_->buckets)
        if (!bucket.requests.empty()) return;
    for (const State::Split& sp : state_->split)
        if (!sp.requests.empty()) return;
    MPI_Comm_free(&state_->comm);
}

void GradientReducer::ready(std::size_t i, Tensor* gradient) {
    State& st = *state_;
    if (i >= st.params.size()) throw std::out_of_range("dist::GradientReducer::ready: parameter " + std::to_string(i) +
                                                       " of " + std::to_string(st.params.size()));
    if (st.is_ready[i]) throw std::logic_error("dist::GradientReducer::ready: parameter " + std::to_string(i) + " was already ready this step");
    st.is_ready[i] = true;
    st.gradient[i] = gradient;
    if (st.ranks == 1) {  // the sum of one rank: +0 + g, as World::sum_in_rank_order gives
        if (gradient && !st.params[i]->frozen)
            for (float& v : *gradient) v = 0.0f + v;
        return;
    }
    if (gradient && gradient->size() != st.params[i]->value.size())
        throw ShapeError("dist::GradientReducer::ready: parameter " + std::to_string(i) + "'s gradient has shape " +
                         to_string(gradient->shape()) + ", the parameter " + to_string(st.params[i]->value.shape()));
    if (State::Split& sp = st.split[i]; sp.active) {
        if (!gradient && sp.early_source)
            throw std::logic_error("dist::GradientReducer::ready: parameter " + std::to_string(i) +
                                   " had a gradient when its early rows were ready, and now has none");
        if (!sp.union_started) {  // no rows of its own still to come: it takes part with none
            sp.rows = st.params[i]->value.shape()[0];
            sp.row_size = st.params[i]->value.size() / sp.rows;
            sp.late.assign(sp.rows, 0);
            sp.early_source = gradient;
            st.start_union(i);
        }
        st.advance_split(i, false);
        return;
    }
    if (st.bucket_of[i] < 0) return;  // frozen
    const auto b = static_cast<std::size_t>(st.bucket_of[i]);
    State::Bucket& bucket = st.buckets[b];
    if (!gradient) st.gradient[i] = st.zeros_for(i);  // contributes zeros, and takes the sum if another rank has a gradient
    bucket.flags[st.member_of[i]] = gradient ? 1.0f : 0.0f;
    if (--bucket.waiting == 0) st.start(b);
}

void GradientReducer::ready_except_rows(std::size_t i, Tensor* gradient, std::span<const std::int64_t> rows) {
    State& st = *state_;
    if (i >= st.params.size())
        throw std::out_of_range("dist::GradientReducer::ready_except_rows: parameter " + std::to_string(i) + " of " +
                                std::to_string(st.params.size()));
    const Param& param = *st.params[i];
    State::Split& sp = st.split[i];
    if (st.is_ready[i] || sp.reported)
        throw std::logic_error("dist::GradientReducer::ready_except_rows: parameter " + std::to_string(i) +
                               " was already ready this step");
    if (param.value.dimension() < 1 || (gradient && gradient->size() != param.value.size()))
        throw ShapeError("dist::GradientReducer::ready_except_rows: parameter " + std::to_string(i) + " of shape " +
                         to_string(param.value.shape()) + " has no rows to look up" +
                         (gradient ? " or a gradient of shape " + to_string(gradient->shape()) : std::string()));
    const std::size_t row_count = param.value.shape()[0];
    for (std::int64_t r : rows)
        if (r < 0 || static_cast<std::size_t>(r) >= row_count)
            throw std::out_of_range("dist::GradientReducer::ready_except_rows: row " + std::to_string(r) + " of parameter " +
                                    std::to_string(i) + ", which has " + std::to_string(row_count));
    if (st.ranks == 1 || param.frozen) return;
    sp.reported = true;
    if (!sp.active) return;  // summed whole this step: the ranks agree on splits at finish()
    sp.rows = row_count;
    sp.row_size = param.value.size() / sp.rows;
    sp.late.assign(sp.rows, 0);
    for (std::int64_t r : rows) sp.late[static_cast<std::size_t>(r)] = 1;
    sp.early_source = gradient;
    st.start_union(i);
    st.advance_split(i, false);
}

void GradientReducer::progress() {
    State& st = *state_;
    for (std::size_t i = 0; i < st.params.size(); ++i)
        if (st.split[i].active) st.advance_split(i, false);
    st.advance_in_flight();
}

std::vector<Tensor*> GradientReducer::finish() {
    State& st = *state_;
    for (std::size_t i = 0; i < st.params.size(); ++i)
        if (!st.is_ready[i]) ready(i, nullptr);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < st.params.size(); ++i)
        if (st.split[i].active) st.advance_split(i, true);
    for (std::size_t b = 0; b < st.buckets.size(); ++b) st.wait_for(b);
    st.in_flight.clear();
    st.wait_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<Tensor*> sums(st.params.size(), nullptr);
    for (std::size_t i = 0; i < st.params.size(); ++i) {
        if (st.ranks == 1) {
            sums[i] = st.params[i]->frozen ? nullptr : st.gradient[i];
        } else if (st.split[i].active) {
            sums[i] = st.gather_rows(i);
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
    if (st.ranks > 1) st.agree_on_splits();  // after the sums were taken: the next step's layout
    return sums;
}

std::size_t GradientReducer::bucket_count() const { return state_->whole_buckets; }
std::size_t GradientReducer::split_count() const {
    const State& st = *state_;
    return static_cast<std::size_t>(std::count_if(st.split.begin(), st.split.end(), [](const State::Split& sp) { return sp.active; }));
}
double GradientReducer::last_wait_seconds() const { return state_->wait_seconds; }

}  // namespace remat::dist
