#pragma once
// Comparing remat's float32 against a float64 PyTorch reference file (tests/fixtures/make_*_fixtures.py):
// the largest difference relative to the tensor's scale, for logits and every parameter gradient.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "remat/hf/safetensors.hpp"
#include "remat/tree/parameters.hpp"

namespace remat::test {

// max |a − b| over the tensor, relative to the reference's largest magnitude — floored at 1e-3, as
// some gradients are zero in exact arithmetic (attention key biases: a constant added to every score
// of a query leaves its softmax unchanged) and float32 leaves noise there.
inline double relative_difference(const Tensor& got, const Tensor& expected) {
    REQUIRE(got.shape() == expected.shape());
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(got.data()[i]) - expected.data()[i]));
        scale = std::max(scale, std::abs(static_cast<double>(expected.data()[i])));
    }
    return worst / std::max(scale, 1e-3);
}

// Checks every gradient, by its parameter path, within `tolerance` of the reference's "grad.<path>"
// (relative_difference) and that there are expected_count of them; returns the largest difference.
inline double compare_named_gradients(const std::vector<std::pair<std::string, const Tensor*>>& grads,
                                      const hf::SafetensorsFile& reference, std::size_t expected_count,
                                      double tolerance = 1e-4) {
    double worst = 0;
    std::string worst_name;
    for (const auto& named : grads) {  // not a structured binding: INFO captures it, which clang 14 refuses
        const std::string& path = named.first;
        const Tensor* g = named.second;
        const hf::TensorInfo* ref = reference.find("grad." + path);
        INFO(path);
        REQUIRE(ref != nullptr);
        REQUIRE(g != nullptr);
        const double d = relative_difference(*g, reference.read_float(*ref));
        if (d > worst) worst = d, worst_name = path;
        CHECK(d < tolerance);
    }
    MESSAGE("largest gradient difference: " << worst << " (relative to the tensor's scale) in " << worst_name);
    CHECK(grads.size() == expected_count);
    return worst;
}

// The same for a model-shaped tree of gradients (train::withgradient's).
template <class Model>
double compare_gradients(Model& grads, const hf::SafetensorsFile& reference, std::size_t expected_count,
                         double tolerance = 1e-4) {
    std::vector<std::pair<std::string, const Tensor*>> named;
    tree::foreach_parameter(grads, [&](const std::string& path, const Param& g) { named.emplace_back(path, &g.value); });
    return compare_named_gradients(named, reference, expected_count, tolerance);
}

}  // namespace remat::test
