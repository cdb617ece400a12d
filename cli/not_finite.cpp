#include "cli/not_finite.hpp"

#include <cmath>

#include "remat/ad/tape.hpp"
#include "remat/layers/layer.hpp"

namespace remat::cli {

std::string where_not_finite(models::Model& model, const models::Inputs& in) {
    ad::NoGrad no_grad;
    nn::CheckFinite on;
    try {
        (void)model.logits(in);
    } catch (const ValueError& e) {
        return std::string(" (it first appears in the input of ") + e.what() + ")";
    }
    return "";
}

std::string not_finite_kind(double value) { return std::isnan(value) ? "nan" : "infinite"; }

}  // namespace remat::cli
