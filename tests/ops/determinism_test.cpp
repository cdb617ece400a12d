// Every kernel gives the same bits on every call — checkpointing's bitwise guarantee rests on it.
#include <doctest/doctest.h>

#include <cblas.h>

#include <cstring>

#include "op_cases.hpp"
#include "remat/ad/tape.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
using test::same_bits;

namespace {
// Output and every input gradient of sum(op(inputs) ⊙ weights).
std::vector<Tensor> run(const std::function<Var(const std::vector<Var>&)>& call, std::vector<Tensor>& inputs) {
    std::vector<Tensor*> wrt;
    for (auto& t : inputs) wrt.push_back(&t);
    Tensor output;
    auto result = ad::gradient(
        [&] {
            std::vector<Var> vars;
            for (auto& t : inputs) vars.push_back(ad::leaf(t));
            Var y = call(vars);
            output = y.value();
            Tensor weights = empty(y.shape());
            Generator(5).fill_normal(weights.data(), weights.size());
            return ops::sum(ops::mul(y, Var(std::move(weights))));
        },
        wrt);
    result.grads.push_back(std::move(output));
    return std::move(result.grads);
}
}  // namespace

TEST_CASE("kernels are deterministic") {
    SUBCASE("every op, called repeatedly") {
        for (const auto& c : test::op_cases()) {
            CAPTURE(c.name);
            auto inputs = test::case_inputs(c, 77);
            const auto first = run(c.call, inputs);
            for (int repeat = 0; repeat < 3; ++repeat) {
                const auto again = run(c.call, inputs);
                for (std::size_t i = 0; i < first.size(); ++i) CHECK(same_bits(first[i], again[i]));
            }
        }
    }

    SUBCASE("transformer-sized kernels on one, two and three threads") {
        using namespace remat::ops;
        const std::size_t remat_threads = ops::num_threads();
        auto block = [](const std::vector<Var>& x) {
            Var h = layer_norm(x[0], x[2], x[3], 1e-5f);
            h = linear(h, x[1], x[3], WeightLayout::in_out);  // (2, 128, 192)·(192, 192)
            Var scores = matmul(reshape(h, {2, 128, 192}), reshape(h, {2, 128, 192}), false, true);
            Var a = attention(concat_last({h, h, gelu_tanh(h)}), 3, {.causal = true});  // fused, D = 64
            return gelu_tanh(add(matmul(softmax(scores, {.causal = true}), h), a));
        };
        test::OpCase c{"block", {{2, 128, 192}, {192, 192}, {192}, {192}}, block};
        auto inputs = test::case_inputs(c, 3);
        // remat's pool splits kernels and sgemm in pieces fixed by the shapes (OpenBLAS single-threaded,
        // whose bits on AMD Zen's Haswell kernels depend on where C is cut).
        ops::set_num_threads(1);
        const auto one = run(block, inputs);
        ops::set_num_threads(2);
        const auto two = run(block, inputs);
        const auto again = run(block, inputs);
        ops::set_num_threads(3);
        const auto three = run(block, inputs);
        ops::set_num_threads(remat_threads);
        CHECK(openblas_get_num_threads() == 1);
        for (std::size_t i = 0; i < one.size(); ++i) {
            CAPTURE(i);
            CHECK(same_bits(one[i], two[i]));
            CHECK(same_bits(two[i], again[i]));
            CHECK(same_bits(one[i], three[i]));
        }
    }
}
