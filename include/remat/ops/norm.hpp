#pragma once
#include "remat/ad/var.hpp"

namespace remat::ops {

// Layer norm over the last axis: y = (x − mean) / √(var + eps) · gamma + beta, var biased (÷C).
// x (..., C), gamma (C,), beta (C,).
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps);

// RMS norm over the last axis (Llama's LlamaRMSNorm): y = weight · x / √(mean(x²) + eps).
// x (..., C), weight (C,). HF computes it in float32 and casts back; remat's tensors are float32.
Var rms_norm(const Var& x, const Var& weight, float eps);

}  // namespace remat::ops

namespace remat::ops {

// Batch norm as in training, over x (N, C): each feature normalised with the batch's mean and
// biased variance, then y = x̂ · gamma + beta. The batch statistics (C,) are written to batch_mean
// and batch_var (biased) when given, for the caller's running averages.
Var batch_norm(const Var& x, const Var& gamma, const Var& beta, float eps, Tensor* batch_mean = nullptr,
               Tensor* batch_var = nullptr);

}  // namespace remat::ops
