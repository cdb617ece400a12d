#include "remat/layers/rotary.hpp"

#include <cmath>
#include <numbers>

namespace remat::nn {

std::vector<double> rope_inverse_frequencies(std::size_t head_dim, double theta, const RopeScaling& s) {
    const double D = static_cast<double>(head_dim);
    std::vector<double> inv(head_dim / 2);
    for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / D);
    switch (s.type) {
        case RopeScaling::Type::none: break;
        case RopeScaling::Type::linear:
            for (double& f : inv) f /= s.factor;
            break;
        case RopeScaling::Type::llama3: {
            const double low_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
            const double high_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
            for (double& f : inv) {
                const double wavelen = 2 * std::numbers::pi / f;
                if (wavelen > low_wavelen) {
                    f /= s.factor;
                } else if (!(wavelen < high_wavelen)) {  // the band between: a blend
                    const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                                          (s.high_freq_factor - s.low_freq_factor);
                    f = (1 - smooth) * f / s.factor + smooth * f;
                }
            }
            break;
        }
    }
    return inv;
}

RotaryTables rotary_tables(const std::vector<double>& inv_freq, std::size_t T) {
    const std::size_t half = inv_freq.size(), D = 2 * half;
    Tensor c = empty(Shape{T, D}), s = empty(Shape{T, D});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < half; ++j) {
            const double angle = static_cast<double>(t) * inv_freq[j];
            c(t, j) = c(t, j + half) = static_cast<float>(std::cos(angle));
            s(t, j) = s(t, j + half) = static_cast<float>(std::sin(angle));
        }
    return {std::make_shared<const Tensor>(std::move(c)), std::make_shared<const Tensor>(std::move(s))};
}

}  // namespace remat::nn
