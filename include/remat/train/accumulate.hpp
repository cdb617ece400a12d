#pragma once
// Adding gradient trees (gradient accumulation over micro-batches, summing ranks):
//
//   auto total = train::add(grads_a, grads_b);   // a new tree: a + b
//   train::accumulate(total, grads_c);           // total += c, in place
//
// Element by element, parameter by parameter in tree::parameters order: one float addition per
// element, so the result is defined to the bit (IEEE: −0 + +0 = +0) and sums of several trees are
// the same whenever they are added in the same order. Frozen parameters and buffers (empty tensors
// in a gradient tree) are left as they are.
#include <string>

#include "remat/core/error.hpp"
#include "remat/tree/parameters.hpp"

namespace remat::train {

template <class Model>
void accumulate(Model& into, const Model& from) {
    auto to = tree::named_parameters(into);
    auto add = tree::parameters(from);
    for (std::size_t i = 0; i < to.size(); ++i) {
        Tensor& t = to[i].second->value;
        const Tensor& f = add[i]->value;
        if (t.shape() != f.shape())
            throw ShapeError("accumulate: gradient " + to[i].first + ": " + to_string(t.shape()) + " += " +
                             to_string(f.shape()));
        float* out = t.data();
        const float* in = f.data();
        for (std::size_t j = 0; j < t.size(); ++j) out[j] += in[j];
    }
}

template <class Model>
Model add(const Model& a, const Model& b) {
    Model out = a;
    accumulate(out, b);
    return out;
}

}  // namespace remat::train
