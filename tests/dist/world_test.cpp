// dist::World (remat/dist/world.hpp), run twice by meson test: as a plain process (a world of one
// that never touches MPI) and under `mpirun -np 2`, where every rank runs every case. The sums are
// checked against the one-process reference each rank computes itself — it can make every rank's
// contribution, they are drawn from seeds — with memcmp.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "remat/core/random.hpp"
#include "remat/dist/world.hpp"
#include "src/dist/openmpi_leaks.hpp"
#include "tests/dist/the_world.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::world;

namespace {
std::optional<dist::World> the_world;
}  // namespace

const dist::World& test::world() { return *the_world; }

namespace {

// Rank r's contribution: n floats, magnitudes 2^±20, with −0 and +0 planted.
std::vector<float> contribution(std::size_t rank, std::size_t n) {
    std::vector<float> x(n);
    Generator g(1000 + rank);
    g.fill_normal(x.data(), n, 0.0f, 1.0f);
    std::vector<std::uint32_t> bits(n);
    g.fill_bits(bits.data(), n);
    for (std::size_t i = 0; i < n; ++i) x[i] = std::ldexp(x[i], static_cast<int>(bits[i] % 41) - 20);
    if (n > 8) {
        x[7] = -0.0f;                             // −0 on every rank
        x[8] = rank == 0 ? -0.0f : 0.0f;          // −0 on rank 0 only
    }
    return x;
}

// What one process gets adding the N contributions into a zeroed buffer, in rank order.
std::vector<float> one_process_sum(std::size_t ranks, std::size_t n) {
    std::vector<float> sum(n, 0.0f);
    for (std::size_t r = 0; r < ranks; ++r) {
        const std::vector<float> x = contribution(r, n);
        for (std::size_t i = 0; i < n; ++i) sum[i] += x[i];
    }
    return sum;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return test::same_bits(std::as_bytes(std::span(a)), std::as_bytes(std::span(b)));
}
}  // namespace

namespace {
// The processes this one has started (MPI_Init outside mpirun would fork an orted).
std::size_t children() {
    std::size_t n = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream in(task.path() / "children");
        for (std::string pid; in >> pid;) ++n;
    }
    return n;
}
}  // namespace

int main(int argc, char** argv) {
    the_world.emplace();
    if (!world().uses_mpi() && children() != 0) {
        std::fprintf(stderr, "a plain run started a process\n");
        return 1;
    }
    doctest::Context context(argc, argv);
    const int failed = context.run();
    if (failed) world().abort("dist tests failed on this rank", failed);
    the_world.reset();  // MPI_Finalize
    return 0;
}

TEST_CASE("the world: mpirun's ranks, or one process that never touches MPI") {
    if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) {
        CHECK(world().uses_mpi());
        CHECK(world().size() == std::stoul(size));
        CHECK(world().rank() == std::stoul(std::getenv("OMPI_COMM_WORLD_RANK")));
    } else {
        CHECK_FALSE(dist::launched_by_mpirun());
        CHECK_FALSE(world().uses_mpi());
        CHECK(world().size() == 1);
        CHECK(world().rank() == 0);
    }
    CHECK(world().is_root() == (world().rank() == 0));
    CHECK_THROWS_AS(dist::World(), std::logic_error);  // MPI initialises once per process
}

TEST_CASE("sum_in_rank_order: one process's bits, on every rank, for any length") {
    const std::size_t N = world().size();
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000003}}) {
        CAPTURE(n);
        std::vector<float> x = contribution(world().rank(), n);
        world().sum_in_rank_order(x);
        CHECK(same(x, one_process_sum(N, n)));
        if (n > 8) {
            CHECK(!std::signbit(x[7]));  // every sum starts at +0
            CHECK(!std::signbit(x[8]));
        }
        // Identical on every rank: rank 0's result, broadcast, equals this rank's.
        Tensor mine = empty({n}), root = empty({n});
        std::copy(x.begin(), x.end(), mine.data());
        std::copy(x.begin(), x.end(), root.data());
        Tensor* to_share[] = {&root};
        world().broadcast(to_share);
        CHECK(test::same_bits(mine, root));
    }
    const double total = world().sum_in_rank_order(0.25 + static_cast<double>(world().rank()));
    double expected = 0.0;
    for (std::size_t r = 0; r < N; ++r) expected += 0.25 + static_cast<double>(r);
    CHECK(total == expected);
}

TEST_CASE("broadcast: rank 0's tensors everywhere") {
    Tensor a = full({3, 5}, static_cast<float>(world().rank() + 1)), b = full({7}, -static_cast<float>(world().rank()));
    Tensor* tensors[] = {&a, &b};
    world().broadcast(tensors);
    CHECK(test::same_bits(a, full({3, 5}, 1.0f)));
    CHECK(test::same_bits(b, full({7}, -0.0f)));
}

TEST_CASE("broadcast_from: each tensor from its own root") {
    const std::size_t N = world().size();
    std::vector<Tensor> tensors;
    std::vector<std::size_t> roots;
    for (std::size_t t = 0; t < 5; ++t) {  // tensor t's value on rank r: 10·t + r
        tensors.push_back(full({t + 1, 3}, static_cast<float>(10 * t + world().rank())));
        roots.push_back((t * 7 + 1) % N);
    }
    std::vector<Tensor*> pointers;
    for (Tensor& t : tensors) pointers.push_back(&t);
    world().broadcast_from(pointers, roots);
    for (std::size_t t = 0; t < tensors.size(); ++t) {
        CAPTURE(t);
        CHECK(test::same_bits(tensors[t], full({t + 1, 3}, static_cast<float>(10 * t + roots[t]))));
    }
}

TEST_CASE("all_gather and sums of doubles") {
    const float mine[] = {static_cast<float>(world().rank()), 0.5f};
    const std::vector<float> all = world().all_gather(mine);
    REQUIRE(all.size() == 2 * world().size());
    for (std::size_t r = 0; r < world().size(); ++r) {
        CHECK(all[2 * r] == static_cast<float>(r));
        CHECK(all[2 * r + 1] == 0.5f);
    }
    // One non-zero contributor per element: every rank ends with exactly that value.
    std::vector<double> values(5, 0.0);
    for (std::size_t i = world().rank(); i < values.size(); i += world().size()) values[i] = 1.0 / 3.0 + static_cast<double>(i);
    world().sum_in_rank_order(std::span<double>(values));
    for (std::size_t i = 0; i < values.size(); ++i) CHECK(values[i] == 1.0 / 3.0 + static_cast<double>(i));
}
