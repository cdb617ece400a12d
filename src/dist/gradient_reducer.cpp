// The calls backward makes (ready, ready_except_rows, progress) and the step's end (finish); the
// buckets' messages are in reducer_buckets.cpp, the tables summed in two parts in reducer_split_rows.cpp.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "reducer_state.hpp"
#include "remat/core/error.hpp"

namespace remat::dist {

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
