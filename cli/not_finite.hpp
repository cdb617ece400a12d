#pragma once
// Where a NaN or an infinity came from: a non-finite loss is an error naming the first layer whose
// input is not finite, found by running the forward pass again with nn::CheckFinite on.
#include <string>

#include "models/architecture.hpp"

namespace remat::cli {

// " (it first appears in the input of h.0.mlp.c_proj: …)" — the layer named by nn::CheckFinite's
// ValueError, on a forward pass of `in` without recording — or "" when every layer's input is
// finite (the loss itself, or the backward pass, made it).
std::string where_not_finite(models::Model& model, const data::Batch& in);

// Throws Failure "<parameter> holds nan at index (3, 5); <consequence>" for the first parameter that
// is not finite: an update can diverge after the last loss was computed (or a checkpoint hold a NaN
// the loss never reads), and such weights must not be saved as a model.
void check_parameters_finite(models::Model& model, const std::string& consequence);

// "nan" or "infinite".
std::string not_finite_kind(double value);

}  // namespace remat::cli
