// dropout_linear (LoRA's fused down projection) against the ops it fuses — scale · linear(dropout(x), A)
// with the same generator — at sizes the finite-difference table cannot afford: several tiles of rows
// forward, several chunks of columns backward, a width that is not a multiple of 4 (a mask row
// starting mid-block); and the same bits on one, two and three threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "remat/ad/tape.hpp"
#include "remat/core/error.hpp"
#include "remat/ops.hpp"
#include "tests/support/compare_reference.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::random_tensor;
using test::relative_difference;

namespace {
// y, dx, dA of sum(y ⊙ w) for y = f(x, A, generator), and the generator's state afterwards.
struct Result {
    std::vector<Tensor> tensors;
    Generator::State after;
};
Result run(const std::function<Var(const Var&, const Var&, Generator&)>& f, Tensor& x, Tensor& a) {
    Generator g(21);
    Tensor y;
    Tensor* wrt[] = {&x, &a};
    auto result = ad::gradient(
        [&] {
            Var out = f(ad::leaf(x), ad::leaf(a), g);
            y = out.value();
            return ops::sum(ops::mul(out, Var(random_tensor(out.shape(), 9))));
        },
        wrt);
    result.grads.insert(result.grads.begin(), std::move(y));
    return {std::move(result.grads), g.state()};
}
}  // namespace

TEST_CASE("dropout_linear is scale · linear(dropout(x), A), mask for mask") {
    const float p = 0.3f, scale = 0.75f;
    auto fused = [&](const Var& x, const Var& a, Generator& g) { return ops::dropout_linear(x, a, scale, p, &g); };
    auto composed = [&](const Var& x, const Var& a, Generator& g) {
        return ops::scale(ops::linear(ops::dropout(x, p, g), a, Var(), ops::WeightLayout::out_in), scale);
    };
    // (3, 211, 701): 633 rows of 701 features, r 16 — rows in tiles of 93 forward, columns in chunks of
    // 256 backward, each row's mask starting at another lane of a Philox block.
    Tensor x = random_tensor(Shape{3, 211, 701}, 1), a = random_tensor(Shape{16, 701}, 2);
    const Result want = run(composed, x, a), got = run(fused, x, a);
    const char* names[] = {"y", "dx", "dA"};
    for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(names[i]);
        CHECK(relative_difference(got.tensors[i], want.tensors[i]) < 1e-5);
    }
    CHECK(got.after == want.after);  // the dropouts after it draw what they drew before

    SUBCASE("a dropped element's gradient is exactly zero, and a kept one's is the product's") {
        // dx of an element dropped in the mask: the composed op gives exactly 0 there too.
        const Tensor& dx_got = got.tensors[1];
        const Tensor& dx_want = want.tensors[1];
        std::size_t zeros = 0;
        for (std::size_t i = 0; i < dx_got.size(); ++i)
            if (dx_want.data()[i] == 0.0f) {
                ++zeros;
                CHECK(dx_got.data()[i] == 0.0f);
            }
        CHECK(zeros > dx_got.size() / 4);  // about p of them
    }

    SUBCASE("the same bits on one, two and three threads, and with no dropout") {
        const std::size_t threads = ops::num_threads();
        for (float q : {p, 0.0f}) {
            CAPTURE(q);
            auto f = [&](const Var& xv, const Var& av, Generator& g) { return ops::dropout_linear(xv, av, scale, q, &g); };
            ops::set_num_threads(1);
            const Result one = run(f, x, a);
            ops::set_num_threads(2);
            const Result two = run(f, x, a);
            ops::set_num_threads(3);
            const Result three = run(f, x, a);
            ops::set_num_threads(threads);
            for (std::size_t i = 0; i < 3; ++i) {
                CAPTURE(names[i]);
                CHECK(test::same_bits(one.tensors[i], two.tensors[i]));
                CHECK(test::same_bits(one.tensors[i], three.tensors[i]));
            }
        }
    }
}

TEST_CASE("dropout_linear in a checkpoint: recomputed, or its output kept and its mask drawn again") {
    // Forward keeps the mask as bits; a checkpoint whose policy keeps narrowing outputs reuses the output
    // in its recomputation, so no forward runs and backward draws the mask again: the same bits either way.
    Tensor x = random_tensor(Shape{130, 300}, 3), a = random_tensor(Shape{8, 300}, 4);
    auto down = [](const Var& xv, const Var& av) {
        Generator g(5);
        return ops::gelu_tanh(ops::dropout_linear(xv, av, 2.0f, 0.2f, &g));
    };
    auto plain = [&](const Var& xv, const Var& av, Generator&) { return down(xv, av); };
    auto checkpointed = [&](ad::KindSet keep) {
        return [&, keep](const Var& xv, const Var& av, Generator&) {
            return ad::checkpointed([&](const std::vector<Var>& in) { return down(in[0], in[1]); }, {xv, av}, keep);
        };
    };
    const Result want = run(plain, x, a);
    for (const ad::KindSet keep : {ad::KindSet{}, ad::KindSet{ad::OpKind::narrowing}}) {
        const Result got = run(checkpointed(keep), x, a);
        for (std::size_t i = 0; i < 3; ++i) CHECK(test::same_bits(got.tensors[i], want.tensors[i]));
    }
}

TEST_CASE("dropout_linear refuses bad shapes and a missing generator") {
    const Var x(random_tensor(Shape{4, 6}, 1));
    CHECK_THROWS_AS(ops::dropout_linear(x, Var(random_tensor(Shape{2, 5}, 2)), 1.0f), ShapeError);
    CHECK_THROWS_AS(ops::dropout_linear(x, Var(random_tensor(Shape{6}, 2)), 1.0f), ShapeError);
    CHECK_THROWS_AS(ops::dropout_linear(x, Var(random_tensor(Shape{2, 6}, 2)), 1.0f, 0.5f), ValueError);
    Generator g(1);
    CHECK_THROWS_AS(ops::dropout_linear(x, Var(random_tensor(Shape{2, 6}, 2)), 1.0f, 1.5f, &g), ValueError);
}
