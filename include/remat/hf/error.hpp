#pragma once
// Errors of the HuggingFace file formats: remat::FormatError (core/error.hpp), under its hf:: name.
#include "remat/core/error.hpp"

namespace remat::hf {

using FormatError = remat::FormatError;

}  // namespace remat::hf
