// dist::GradientReducer (remat/dist/gradient_reducer.hpp), in the dist tests' runs (one process,
// mpirun -np 2 and -np 3): gradients made ready in a different order on every rank, buckets whose
// rank slices cross tensors, a parameter only one rank has a gradient for, one no rank has and a
// frozen one. Every rank computes every rank's contribution from seeds and checks the sums with
// memcmp against 0 + g₀ + g₁ + … in rank order.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "remat/core/random.hpp"
#include "remat/dist/gradient_reducer.hpp"
#include "remat/dist/shards.hpp"
#include "tests/dist/the_world.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::world;

namespace {
const Shape shapes[] = {{5}, {3, 7}, {4}, {1000}, {2, 300}, {1}, {257}, {10}, {33}, {4096}};
constexpr std::size_t frozen = 2, nobody = 7, one_rank = 8;

// Rank r's gradient for parameter i at step s: magnitudes 2^±20, −0 planted; none for `nobody`,
// and for `one_rank` on every rank but the last.
std::optional<Tensor> gradient(std::size_t step, std::size_t i, std::size_t rank, std::size_t ranks) {
    if (i == frozen || i == nobody || (i == one_rank && rank + 1 != ranks)) return std::nullopt;
    Tensor t = empty(shapes[i]);
    Generator g(1'000'000 * step + 1000 * i + rank);
    g.fill_normal(t.data(), t.size(), 0.0f, 1.0f);
    std::vector<std::uint32_t> bits(t.size());
    g.fill_bits(bits.data(), bits.size());
    for (std::size_t e = 0; e < t.size(); ++e) t.data()[e] = std::ldexp(t.data()[e], static_cast<int>(bits[e] % 41) - 20);
    t.data()[0] = -0.0f;
    return t;
}
}  // namespace

TEST_CASE("GradientReducer: the ranks' gradients summed in rank order, whatever order they become ready in") {
    const std::size_t N = world().size(), me = world().rank();
    std::vector<Param> params;
    for (const Shape& s : shapes) params.emplace_back(zeros(s));
    params[frozen].frozen = true;
    std::vector<Param*> pointers;
    for (Param& p : params) pointers.push_back(&p);
    dist::GradientReducer reducer(world(), pointers, 300 * sizeof(float));
    // Reverse order: {4096}, then {33}{10}{257}, {1}{600}, {1000}, {21}{5} (the frozen one left out).
    CHECK(reducer.bucket_count() == (N > 1 ? 5 : 0));

    for (std::size_t step = 0; step < 2; ++step) {  // the second step reuses the buckets
        CAPTURE(step);
        std::vector<std::optional<Tensor>> mine;
        for (std::size_t i = 0; i < params.size(); ++i) mine.push_back(gradient(step, i, me, N));
        std::vector<std::size_t> order(params.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        if (me % 3 == 0) std::reverse(order.begin(), order.end());
        if (me % 3 == 2) std::stable_partition(order.begin(), order.end(), [](std::size_t i) { return i % 2 == 0; });
        for (std::size_t i : order) {
            reducer.ready(i, mine[i] ? &*mine[i] : nullptr);
            reducer.progress();
        }
        const std::vector<Tensor*> sums = reducer.finish();
        REQUIRE(sums.size() == params.size());

        for (std::size_t i = 0; i < params.size(); ++i) {
            CAPTURE(i);
            if (i == frozen || i == nobody) {
                CHECK(sums[i] == nullptr);
                continue;
            }
            REQUIRE(sums[i] != nullptr);
            if (mine[i]) CHECK(sums[i] == &*mine[i]);  // summed in place
            Tensor expected = zeros(shapes[i]);
            for (std::size_t r = 0; r < N; ++r)
                if (auto g = gradient(step, i, r, N)) expected += *g;
            CHECK(test::same_bits(*sums[i], expected));
            CHECK(!std::signbit(sums[i]->data()[0]));  // +0 + (−0) + …
        }
    }
}

TEST_CASE("GradientReducer with owners (ZeRO-1): each sum reaches its owner alone, the same bits") {
    const std::size_t N = world().size(), me = world().rank();
    std::vector<Param> params;
    std::vector<std::size_t> sizes;
    for (const Shape& s : shapes) {
        params.emplace_back(zeros(s));
        sizes.push_back(params.back().value.size());
    }
    params[frozen].frozen = true;
    sizes[frozen] = 0;
    std::vector<Param*> pointers;
    for (Param& p : params) pointers.push_back(&p);
    const std::vector<std::size_t> owners = dist::owners_by_elements(sizes, N);
    for (std::size_t bucket_bytes : {std::size_t{300} * sizeof(float), std::size_t{25} << 20}) {  // five buckets, one
        CAPTURE(bucket_bytes);
        dist::GradientReducer reducer(world(), pointers, bucket_bytes, owners);
        for (std::size_t step = 0; step < 2; ++step) {
            CAPTURE(step);
            std::vector<std::optional<Tensor>> mine;
            for (std::size_t i = 0; i < params.size(); ++i) mine.push_back(gradient(step, i, me, N));
            for (std::size_t k = 0; k < params.size(); ++k) {  // rank r starts at parameter r: a different order on each
                const std::size_t i = (k + me) % params.size();
                reducer.ready(i, mine[i] ? &*mine[i] : nullptr);
                reducer.progress();
            }
            const std::vector<Tensor*> sums = reducer.finish();
            REQUIRE(sums.size() == params.size());
            for (std::size_t i = 0; i < params.size(); ++i) {
                CAPTURE(i);
                if (i == frozen || (N > 1 && owners[i] != me)) {
                    CHECK(sums[i] == nullptr);
                    continue;
                }
                if (N == 1 && i == nobody) {  // one process: as without owners
                    CHECK(sums[i] == nullptr);
                    continue;
                }
                REQUIRE(sums[i] != nullptr);  // zeros where no rank had one: the same update as none
                Tensor expected = zeros(shapes[i]);
                for (std::size_t r = 0; r < N; ++r)
                    if (auto g = gradient(step, i, r, N)) expected += *g;
                CHECK(test::same_bits(*sums[i], expected));
            }
        }
    }
}

TEST_CASE("owners_by_elements: contiguous shares of whole tensors, as even as they allow") {
    using dist::owners_by_elements;
    CHECK(owners_by_elements(std::vector<std::size_t>{10, 10, 10, 10}, 2) == std::vector<std::size_t>{0, 0, 1, 1});
    // 7 elements over 3 ranks, one tensor of 5: its middle (element 2.5 of 7) lies in rank 1's third.
    CHECK(owners_by_elements(std::vector<std::size_t>{5, 1, 1}, 3) == std::vector<std::size_t>{1, 2, 2});
    CHECK(owners_by_elements(std::vector<std::size_t>{3, 0, 3}, 2) == std::vector<std::size_t>{0, 1, 1});  // a frozen one anywhere
    CHECK(owners_by_elements(std::vector<std::size_t>{0, 0}, 4) == std::vector<std::size_t>{0, 0});
    CHECK(owners_by_elements(std::vector<std::size_t>{1}, 3) == std::vector<std::size_t>{1});
    // GPT-2 small's sizes in parameters() order: the shares' largest is 0.51 of all at N = 2, 0.34 at N = 3.
    std::vector<std::size_t> gpt2{50257 * 768, 1024 * 768};
    for (int layer = 0; layer < 12; ++layer)
        for (std::size_t n : {768, 768, 768 * 2304, 2304, 768 * 768, 768, 768, 768, 768 * 3072, 3072, 3072 * 768, 768})
            gpt2.push_back(n);
    gpt2.insert(gpt2.end(), {768, 768});
    std::size_t total = 0;
    for (std::size_t n : gpt2) total += n;
    for (std::size_t N : {2, 3}) {
        std::vector<std::size_t> share(N, 0);
        const std::vector<std::size_t> owner = owners_by_elements(gpt2, N);
        for (std::size_t i = 0; i < gpt2.size(); ++i) {
            if (i > 0) CHECK(owner[i] >= owner[i - 1]);
            share[owner[i]] += gpt2[i];
        }
        const double largest = static_cast<double>(*std::max_element(share.begin(), share.end())) / static_cast<double>(total);
        MESSAGE("GPT-2 small over " << N << " ranks: the largest share " << largest);
        CHECK(largest <= (N == 2 ? 0.55 : 0.37));
    }
}

TEST_CASE("GradientReducer: what finish() is not told of counts as no gradient; misuse is an error") {
    std::vector<Param> params;
    params.emplace_back(zeros({3}));
    params.emplace_back(zeros({2}));
    std::vector<Param*> pointers = {&params[0], &params[1]};
    dist::GradientReducer reducer(world(), pointers);
    Tensor g = full({3}, 1.0f);
    reducer.ready(0, &g);
    CHECK_THROWS_AS(reducer.ready(0, &g), std::logic_error);
    CHECK_THROWS_AS(reducer.ready(2, &g), std::out_of_range);
    const std::vector<Tensor*> sums = reducer.finish();
    REQUIRE(sums[0] == &g);
    CHECK(test::same_bits(g, full({3}, static_cast<float>(world().size()))));
    CHECK(sums[1] == nullptr);
}

// An embedding table: its rows the lookups do not read are final before the rest (ready_except_rows);
// from the second step the ranks sum it in those two parts. The sums stay 0 + g₀ + g₁ + … to the bit:
// with a gradient before the lookups (a tied table) or none (positions), with a rank not told of its
// rows first (it takes part at ready), with and without owners.
TEST_CASE("GradientReducer: a table summed in two parts, the rows lookups read last; the same bits") {
    const std::size_t N = world().size(), me = world().rank();
    const std::size_t V = 40, C = 3;
    std::vector<Param> params;
    params.emplace_back(zeros({V, C}));  // the table
    params.emplace_back(zeros({50}));
    params.emplace_back(zeros({V / 2, C}));  // a second table, never told of early
    std::vector<Param*> pointers = {&params[0], &params[1], &params[2]};
    // Rank r's lookups read rows r, r + 3, r + 6, … (repeats across ranks); step 2 reads none here.
    auto lookup_rows = [&](std::size_t step, std::size_t rank) {
        std::vector<std::int64_t> rows;
        if (step != 2)
            for (std::size_t r = rank; r < V; r += 3 + step) rows.push_back(static_cast<std::int64_t>(r));
        return rows;
    };
    // Before the lookups: a gradient (steps 0, 1, 2) or none (step 3, as a table only looked up).
    auto before = [&](std::size_t step, std::size_t rank) -> std::optional<Tensor> {
        if (step == 3) return std::nullopt;
        Tensor t = empty({V, C});
        Generator g(7000 + 100 * step + rank);
        g.fill_normal(t.data(), t.size(), 0.0f, 1.0f);
        return t;
    };
    // After: the lookups add to their rows.
    auto after = [&](std::size_t step, std::size_t rank) {
        Tensor t = before(step, rank).value_or(zeros({V, C}));
        Tensor added = empty({V, C});
        Generator g(9000 + 100 * step + rank);
        g.fill_normal(added.data(), added.size(), 0.0f, 1.0f);
        for (std::int64_t r : lookup_rows(step, rank))
            for (std::size_t c = 0; c < C; ++c) t.data()[static_cast<std::size_t>(r) * C + c] += added.data()[static_cast<std::size_t>(r) * C + c];
        return t;
    };
    std::vector<std::size_t> sizes = {V * C, 50, V / 2 * C};
    for (const std::vector<std::size_t>& owners : {std::vector<std::size_t>{}, dist::owners_by_elements(sizes, N)}) {
        CAPTURE(owners.size());
        dist::GradientReducer reducer(world(), pointers, 64 * sizeof(float), owners);
        for (std::size_t step = 0; step < 4; ++step) {
            CAPTURE(step);
            CHECK(reducer.split_count() == (N > 1 && step > 0 ? 1 : 0));
            std::optional<Tensor> early = before(step, me);
            Tensor small = full({50}, static_cast<float>(me + step));
            Tensor second = full({V / 2, C}, 0.5f + static_cast<float>(me));
            const std::vector<std::int64_t> rows = lookup_rows(step, me);
            const bool told = !(step == 1 && me == 1);  // rank 1 is not told early at step 1
            if (told) reducer.ready_except_rows(0, early ? &*early : nullptr, rows);
            reducer.progress();
            reducer.ready(1, &small);
            reducer.progress();
            reducer.ready(2, &second);
            // The lookups: into their rows of the same tensor (the others may hold sums by now), or
            // into a new one where there was none.
            Tensor made;
            Tensor* last = early ? &*early : &made;
            const Tensor looked_up = after(step, me);
            if (early)
                for (std::int64_t r : rows)
                    std::copy_n(looked_up.data() + r * C, C, early->data() + r * C);
            else
                made = looked_up;
            reducer.ready(0, last);
            const std::vector<Tensor*> sums = reducer.finish();
            for (std::size_t i = 0; i < 3; ++i) {
                CAPTURE(i);
                if (!owners.empty() && N > 1 && owners[i] != me) {
                    CHECK(sums[i] == nullptr);
                    continue;
                }
                REQUIRE(sums[i] != nullptr);
                Tensor expected = zeros(params[i].value.shape());
                for (std::size_t r = 0; r < N; ++r)
                    expected += i == 0 ? after(step, r) : i == 1 ? full({50}, static_cast<float>(r + step)) : full({V / 2, C}, 0.5f + static_cast<float>(r));
                CHECK(test::same_bits(*sums[i], expected));
            }
        }
    }
    dist::GradientReducer reducer(world(), pointers);
    const std::int64_t outside[] = {static_cast<std::int64_t>(V)};
    CHECK_THROWS_AS(reducer.ready_except_rows(0, nullptr, outside), std::out_of_range);
}
