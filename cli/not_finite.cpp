#include "cli/not_finite.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cli/errors.hpp"

#include "remat/ad/tape.hpp"
#include "remat/layers/layer.hpp"

namespace remat::cli {

std::string where_not_finite(models::Model& model, const data::Batch& in) {
    ad::NoGrad no_grad;
    nn::CheckFinite on;
    try {
        (void)model.logits(in);
    } catch (const ValueError& e) {
        return std::string(" (it first appears in the input of ") + e.what() + ")";
    }
    return "";
}

void check_parameters_finite(models::Model& model, const std::string& consequence) {
    for (const auto& [name, param] : model.named_parameters()) {
        const Tensor& v = param->value;
        const float* p = v.data();
        const auto bad = std::find_if(p, p + v.size(), [](float x) { return !std::isfinite(x); });
        if (bad == p + v.size()) continue;
        // The flat index in C order, as (i, j, …).
        std::size_t flat = static_cast<std::size_t>(bad - p);
        std::vector<std::size_t> index(v.dimension());
        for (std::size_t d = v.dimension(); d-- > 0;) {
            index[d] = flat % v.shape()[d];
            flat /= v.shape()[d];
        }
        throw Failure(name + " holds " + not_finite_kind(*bad) + " at index " + to_string(index) + "; " + consequence);
    }
}

std::string not_finite_kind(double value) { return std::isnan(value) ? "nan" : "infinite"; }

}  // namespace remat::cli
