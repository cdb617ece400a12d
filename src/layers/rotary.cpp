#include "remat/layers/rotary.hpp"

#include <cmath>

#include "remat/core/error.hpp"
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

namespace {
// Row r of the tables for position position(r).
template <class Position>
RotaryTables tables_of(const std::vector<double>& inv_freq, Shape shape, std::size_t rows, Position position) {
    const std::size_t half = inv_freq.size(), D = 2 * half;
    shape.push_back(D);
    Tensor c = empty(shape), s = empty(shape);
    for (std::size_t r = 0; r < rows; ++r) {
        float *cr = c.data() + r * D, *sr = s.data() + r * D;
        for (std::size_t j = 0; j < half; ++j) {
            const double angle = static_cast<double>(position(r)) * inv_freq[j];
            cr[j] = cr[j + half] = static_cast<float>(std::cos(angle));
            sr[j] = sr[j + half] = static_cast<float>(std::sin(angle));
        }
    }
    return {std::make_shared<const Tensor>(std::move(c)), std::make_shared<const Tensor>(std::move(s))};
}
}  // namespace

RotaryTables rotary_tables(const std::vector<double>& inv_freq, std::size_t T) {
    return tables_of(inv_freq, Shape{T}, T, [](std::size_t r) { return r; });
}

RotaryTables rotary_tables(const std::vector<double>& inv_freq, const IdTensor& positions) {
    if (positions.dimension() != 2)
        throw ShapeError("rotary_tables: expected position ids (B, T), got " + remat::to_string(Shape(positions.shape().begin(), positions.shape().end())));
    for (const std::int64_t p : positions)
        if (p < 0) throw ValueError("rotary_tables: position id " + std::to_string(p) + " is negative");
    return tables_of(inv_freq, Shape{positions.shape()[0], positions.shape()[1]}, positions.size(),
                     [&](std::size_t r) { return positions.data()[r]; });
}

}  // namespace remat::nn
