#include "remat/layers/linear.hpp"

#include "remat/layers/init.hpp"
#include "remat/ops/elementwise.hpp"
#include "remat/ops/linalg.hpp"

namespace remat::nn {

Linear Linear::create(std::size_t in, std::size_t out, Generator& rng, bool with_bias) {
    Linear l{Param{init::glorot_uniform(Shape{out, in}, rng)}, std::nullopt, std::nullopt};
    if (with_bias) l.bias = Param{zeros(Shape{out})};
    return l;
}

std::string Linear::describe() const {
    return "Linear(" + std::to_string(in_features()) + " => " + std::to_string(out_features()) +
           (bias ? "" : ", no bias") + (weight.held_bf16() ? ", bf16" : "") + (adapter ? ", " + adapter->describe() : "") + ")";
}

Var Linear::operator()(const Var& x) const {
    check_features("Linear", x, in_features());
    const Var b = bias ? leaf(*bias) : Var();
    const ops::LowRank update = adapter ? adapter->update(x) : ops::LowRank{};
    return weight.held_bf16() ? ops::linear(x, weight.bf16(), b, ops::WeightLayout::out_in, update)
                              : ops::linear(x, leaf(weight), b, ops::WeightLayout::out_in, update);
}

Conv1D Conv1D::create(std::size_t in, std::size_t out, Generator& rng, float std) {
    return {Param{init::normal(Shape{in, out}, std, rng)}, Param{zeros(Shape{out})}, std::nullopt};
}

std::string Conv1D::describe() const {
    return "Conv1D(" + std::to_string(in_features()) + " => " + std::to_string(out_features()) +
           (weight.held_bf16() ? ", bf16" : "") + (adapter ? ", " + adapter->describe() : "") + ")";
}

Var Conv1D::operator()(const Var& x) const {
    check_features("Conv1D", x, in_features());
    const ops::LowRank update = adapter ? adapter->update(x) : ops::LowRank{};
    return weight.held_bf16() ? ops::linear(x, weight.bf16(), leaf(bias), ops::WeightLayout::in_out, update)
                              : ops::linear(x, leaf(weight), leaf(bias), ops::WeightLayout::in_out, update);
}

}  // namespace remat::nn
