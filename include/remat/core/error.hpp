#pragma once
// Typed exceptions. Messages name the operation or layer path, and both shapes where shapes disagree.
#include <stdexcept>
#include <string>

#include "remat/core/tensor.hpp"

namespace remat {

// Shapes that disagree: "matmul: inner dimensions differ: (2, 3) · (4, 5)".
struct ShapeError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};
// A value outside its valid range: token id beyond the vocabulary, dropout p outside [0, 1).
struct ValueError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Throws ShapeError "<what>: expected <expected>, got <actual>" unless the shapes are equal.
void check_shape(const std::string& what, const Shape& expected, const Shape& actual);

}  // namespace remat
