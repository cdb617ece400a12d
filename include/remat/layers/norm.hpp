#pragma once
// LayerNorm: y = (x − mean) / √(var + eps) · weight + bias over the last axis (HF names weight/bias).
// BatchNorm (1-d, PyTorch's BatchNorm1d on (N, C)): in training, normalise with the batch's mean and
// biased variance and update running_mean/running_var (momentum 0.1, unbiased variance) once per
// forward — never while a checkpoint recomputes; in test mode, use the running statistics.
#include "remat/layers/layer.hpp"
#include "remat/tree/node.hpp"

namespace remat::nn {

struct LayerNorm {
    BOOST_HANA_DEFINE_STRUCT(LayerNorm, (Param, weight), (Param, bias), (float, eps));
    static constexpr const char* name = "LayerNorm";

    static LayerNorm create(std::size_t features, float eps = 1e-5f);
    std::string describe() const;
    Var operator()(const Var& x) const;
};

// RMSNorm: y = weight · x / √(mean(x²) + eps) over the last axis (HF's LlamaRMSNorm: no bias, no
// mean subtraction).
struct RMSNorm {
    BOOST_HANA_DEFINE_STRUCT(RMSNorm, (Param, weight), (float, eps));
    static constexpr const char* name = "RMSNorm";
    static RMSNorm create(std::size_t features, float eps = 1e-6f);
    std::string describe() const;
    Var operator()(const Var& x) const;
};

struct BatchNorm {
    BOOST_HANA_DEFINE_STRUCT(BatchNorm, (Param, weight), (Param, bias), (Tensor, running_mean), (Tensor, running_var),
                             (Tensor, num_batches_tracked), (float, momentum), (float, eps), (Mode, mode));
    static constexpr const char* name = "BatchNorm";

    static BatchNorm create(std::size_t features, float momentum = 0.1f, float eps = 1e-5f);
    std::string describe() const;
    // Not const: training updates the running statistics.
    Var operator()(const Var& x);
};

}  // namespace remat::nn
