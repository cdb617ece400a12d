#pragma once
// Typed exceptions. Messages name the operation or layer path, and both shapes where shapes disagree.
// As an error propagates out of a model, each container prepends its member's name to the path:
// "h.3.attn.c_attn: linear: input features (2, 5) do not match weight (4, 12) (in, out)".
#include <stdexcept>
#include <string>
#include <string_view>

#include "remat/core/tensor.hpp"

namespace remat {

class Error : public std::invalid_argument {
public:
    explicit Error(std::string message) : std::invalid_argument(message), message_(std::move(message)), what_(message_) {}
    const char* what() const noexcept override { return what_.c_str(); }
    // The message without the layer path.
    const std::string& message() const { return message_; }
    // Dotted path of the layer that raised it ("" when raised outside a model).
    const std::string& path() const { return path_; }
    // Called by containers as the error leaves them: "attn" + "c_attn" -> "attn.c_attn".
    void prepend_path(std::string_view segment);

private:
    std::string message_, path_, what_;
};

// Shapes that disagree: "matmul: inner dimensions differ: (2, 3) · (4, 5)".
struct ShapeError : Error {
    using Error::Error;
};
// A value outside its valid range: token id beyond the vocabulary, dropout p outside [0, 1], an
// empty batch.
struct ValueError : Error {
    using Error::Error;
};

// A file that is malformed, truncated, unreadable or unwritable, or a tensor of the wrong dtype. The
// message starts with the file's path and names the tensor where there is one:
// "model.safetensors: tensor "h.0.attn.c_attn.weight": shape (768, 2304) needs 7077888 bytes, data_offsets give 7077880".
struct FormatError : Error {
    using Error::Error;
};

// Throws ShapeError "<what>: expected <expected>, got <actual>" unless the shapes are equal.
void check_shape(const std::string& what, const Shape& expected, const Shape& actual);

}  // namespace remat
