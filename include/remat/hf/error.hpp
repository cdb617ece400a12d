#pragma once
// Errors of the HuggingFace file formats.
#include "remat/core/error.hpp"

namespace remat::hf {

// A file that is malformed, truncated, unreadable or unwritable, or a tensor of the wrong dtype. The
// message starts with the file's path and names the tensor where there is one:
// "model.safetensors: tensor "h.0.attn.c_attn.weight": shape (768, 2304) needs 7077888 bytes, data_offsets give 7077880".
struct FormatError : remat::Error {
    using Error::Error;
};

}  // namespace remat::hf
