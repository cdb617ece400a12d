#include "remat/core/error.hpp"
#include "remat/core/tensor.hpp"

namespace remat {
namespace {
template <class Dims>
std::string join_dims(const Dims& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}
}  // namespace

std::string to_string(const Shape& shape) { return join_dims(shape); }
std::string to_string(const std::vector<std::size_t>& shape) { return join_dims(shape); }

std::size_t element_count(const Shape& shape) {
    std::size_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

void Error::prepend_path(std::string_view segment) {
    if (segment.empty()) return;
    path_ = path_.empty() ? std::string(segment) : std::string(segment) + "." + path_;
    what_ = path_ + ": " + message_;
}

void check_shape(const std::string& what, const Shape& expected, const Shape& actual) {
    if (expected != actual)
        throw ShapeError(what + ": expected " + to_string(expected) + ", got " + to_string(actual));
}

}  // namespace remat
