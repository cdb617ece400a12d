// GradientReducer's lookup tables summed in two parts (ready_except_rows): the rows no rank's lookups
// still add to go as soon as every rank knows which those are, during backward; the others once the
// table is ready. The ranks first exchange which rows each still adds to (a byte per row).
#include <algorithm>

#include "reducer_state.hpp"

namespace remat::dist {

void GradientReducer::State::start_union(std::size_t i) {
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

void GradientReducer::State::start_rows(std::size_t i, std::size_t b, Tensor* rows, bool late_rows, float flag) {
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

Tensor* GradientReducer::State::zeros_for(std::size_t i) {
    Tensor& t = spare[i];
    if (t.shape() != params[i]->value.shape()) t = Tensor::from_shape(params[i]->value.shape());
    std::fill(t.begin(), t.end(), 0.0f);
    return &t;
}

void GradientReducer::State::advance_split(std::size_t i, bool wait) {
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

Tensor* GradientReducer::State::gather_rows(std::size_t i) {
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

void GradientReducer::State::agree_on_splits() {
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
}  // namespace remat::dist
