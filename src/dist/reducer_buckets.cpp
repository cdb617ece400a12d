// GradientReducer's buckets: laid out, sent and summed. A bucket's gradients are reduce-scattered (rank
// s sums slice s, the ranks' copies added in rank order) and all-gathered, or under ZeRO-1 sent to the
// rank that owns each parameter and summed there.
#include <algorithm>
#include <string>

#include "reducer_state.hpp"

namespace remat::dist {

namespace {
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

std::vector<Piece> GradientReducer::State::pieces(const Bucket& bucket, std::size_t a, std::size_t b) const {
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

std::vector<std::vector<Piece>> GradientReducer::State::messages(const Bucket& bucket, const std::vector<Piece>& pieces) {
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

std::size_t GradientReducer::State::total(const std::vector<Piece>& message) {
    std::size_t n = 0;
    for (const Piece& p : message) n += p.count;
    return n;
}

std::size_t GradientReducer::State::slice_size(const Bucket& bucket, std::size_t s) const {
    return slice_start(bucket.length, ranks, s + 1) - slice_start(bucket.length, ranks, s);
}

void GradientReducer::State::start(std::size_t b) {
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

std::vector<Piece> GradientReducer::State::slice(const Bucket& bucket, std::size_t s) const {
    return pieces(bucket, slice_start(bucket.length, ranks, s), slice_start(bucket.length, ranks, s + 1));
}

void GradientReducer::State::sum_and_gather(std::size_t b) {
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

void GradientReducer::State::start_to_owners(std::size_t b) {
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

void GradientReducer::State::sum_owned(std::size_t b) {
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

void GradientReducer::State::post(Bucket& bucket, const std::vector<Piece>& message, std::size_t peer, int t, bool sending) {
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

void GradientReducer::State::next_phase(std::size_t b) {
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

void GradientReducer::State::wait_for(std::size_t b) {
    Bucket& bucket = buckets[b];
    while (bucket.phase == Phase::scattering || bucket.phase == Phase::gathering) {
        MPI_Waitall(static_cast<int>(bucket.requests.size()), bucket.requests.data(), MPI_STATUSES_IGNORE);
        next_phase(b);
    }
}

void GradientReducer::State::advance_in_flight() {
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

void GradientReducer::State::lay_out() {
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
}  // namespace remat::dist
