#pragma once
// Comparing remat's float32 against a float64 PyTorch reference file (tests/fixtures/make_*_fixtures.py):
// the largest difference relative to the tensor's scale, for logits and every parameter gradient.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

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

// Checks every gradient within `tolerance` of the reference (relative_difference); returns the largest.
template <class Model>
double compare_gradients(Model& grads, const hf::SafetensorsFile& reference, std::size_t expected_count,
                         double tolerance = 1e-4) {
    std::size_t compared = 0;
    double worst = 0;
    std::string worst_name;
    tree::foreach_parameter(grads, [&](const std::string& path, const Param& g) {
        const hf::TensorInfo* ref = reference.find("grad." + path);
        CAPTURE(path);
        REQUIRE(ref != nullptr);
        const double d = relative_difference(g.value, reference.read_float(*ref));
        if (d > worst) worst = d, worst_name = path;
        CHECK(d < tolerance);
        ++compared;
    });
    MESSAGE("largest gradient difference: " << worst << " (relative to the tensor's scale) in " << worst_name);
    CHECK(compared == expected_count);
    return worst;
}

}  // namespace remat::test
