// A tour of remat as it is today:
//   1. a two-layer MLP, written as a plain struct, trained by SGD on a synthetic regression task;
//   2. a deep residual MLP differentiated with and without gradient checkpointing: the gradients are
//      bitwise identical, and the peak activation memory (measured, not estimated) is much smaller.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "remat/remat.hpp"

using namespace remat;

namespace {

Tensor random_tensor(const Shape& shape, Generator& g, float std) {
    Tensor t = empty(shape);
    g.fill_normal(t.data(), t.size(), 0.0f, std);
    return t;
}

// y = W2·gelu(W1·x + b1) + b2, weights stored (out, in) as in PyTorch's nn.Linear.
struct Mlp {
    Tensor w1, b1, w2, b2;

    Mlp(std::size_t in, std::size_t hidden, std::size_t out, Generator& g, float out_scale = 1.0f)
        : w1(random_tensor({hidden, in}, g, 1.0f / std::sqrt(float(in)))),
          b1(zeros({hidden})),
          w2(random_tensor({out, hidden}, g, out_scale / std::sqrt(float(hidden)))),
          b2(zeros({out})) {}

    Var operator()(const Var& x) const {
        Var h = ops::gelu_tanh(ops::linear(x, ad::leaf(w1), ad::leaf(b1), ops::WeightLayout::out_in));
        return ops::linear(h, ad::leaf(w2), ad::leaf(b2), ops::WeightLayout::out_in);
    }
    std::vector<Tensor*> parameters() { return {&w1, &b1, &w2, &b2}; }
};

void train_mlp() {
    std::puts("== 1. training a 2-layer MLP with SGD ==");
    Generator g(42);
    const std::size_t n = 256, in = 4, hidden = 32;
    // Target: y = sin(x0) + 0.5·x1·x2 − 0.3·x3 on standard normal inputs.
    const Tensor x = random_tensor({n, in}, g, 1.0f);
    Tensor y = empty({n, 1});
    for (std::size_t i = 0; i < n; ++i)
        y(i, 0) = std::sin(x(i, 0)) + 0.5f * x(i, 1) * x(i, 2) - 0.3f * x(i, 3);

    Mlp model(in, hidden, 1, g);
    const std::vector<Tensor*> params = model.parameters();
    const float learning_rate = 0.1f;
    for (int step = 0; step <= 200; ++step) {
        auto result = ad::gradient([&] { return ops::mse(model(Var(x)), Var(y)); }, params);
        if (step % 20 == 0) std::printf("step %3d  loss %.5f\n", step, result.loss);
        for (std::size_t i = 0; i < params.size(); ++i) *params[i] -= learning_rate * result.grads[i];
    }
}

// A residual block: x + Mlp(x).
struct Block {
    Mlp mlp;
    Var operator()(const Var& x) const { return x + mlp(x); }
};

void compare_checkpointing() {
    std::puts("\n== 2. gradient checkpointing: same gradients, less memory ==");
    Generator g(7);
    const std::size_t batch = 512, width = 128, depth = 12;
    std::vector<Block> blocks;
    for (std::size_t l = 0; l < depth; ++l)  // output layers scaled down so the residual stream stays O(1)
        blocks.push_back({Mlp(width, 4 * width, width, g, 1.0f / std::sqrt(float(depth)))});
    const Tensor x = random_tensor({batch, width}, g, 1.0f);
    const Tensor target = random_tensor({batch, width}, g, 1.0f);

    std::vector<Tensor*> params;
    for (auto& b : blocks)
        for (Tensor* p : b.mlp.parameters()) params.push_back(p);

    auto run = [&](bool checkpoint, std::size_t& peak) {
        memory::PeakScope scope;
        auto result = ad::gradient(
            [&] {
                Var h(x);
                for (std::size_t l = 0; l < depth; ++l) {
                    if (!checkpoint) {
                        h = blocks[l](h);
                    } else {
                        // Keeps only the block's input; the block runs again during backward.
                        // The closure outlives this lambda, so it captures nothing local to it.
                        auto block = [&blocks, l](const std::vector<Var>& in) { return blocks[l](in[0]); };
                        h = ad::checkpointed(block, {h});
                    }
                }
                return ops::mse(h, Var(target));
            },
            params);
        peak = scope.peak_above_baseline();
        return result;
    };

    std::size_t peak_plain = 0, peak_ckpt = 0;
    const auto plain = run(false, peak_plain);
    const auto ckpt = run(true, peak_ckpt);

    float max_diff = std::abs(plain.loss - ckpt.loss);
    for (std::size_t i = 0; i < params.size(); ++i)
        for (std::size_t k = 0; k < plain.grads[i].size(); ++k)
            max_diff = std::max(max_diff, std::abs(plain.grads[i].data()[k] - ckpt.grads[i].data()[k]));

    std::printf("%zu residual blocks, batch %zu, width %zu, loss %.6f\n", depth, batch, width, plain.loss);
    std::printf("max gradient difference: %g\n", max_diff);
    std::printf("peak memory during gradient(), plain:        %8.2f MiB\n", peak_plain / 1048576.0);
    std::printf("peak memory during gradient(), checkpointed: %8.2f MiB\n", peak_ckpt / 1048576.0);
}

}  // namespace

int main() {
    train_mlp();
    compare_checkpointing();
}
