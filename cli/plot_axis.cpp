#include "cli/plot_axis.hpp"

#include <cmath>
#include <cstdio>

namespace remat::cli::plotting {

namespace {

// The nice number nearest to x (1, 2, 2.5, 5 or 10 times a power of ten).
double nice_step(double x) {
    const double power = std::pow(10.0, std::floor(std::log10(x)));
    const double f = x / power;
    const double nice = f < 1.5 ? 1 : f < 2.25 ? 2 : f < 3.5 ? 2.5 : f < 7.5 ? 5 : 10;
    return nice * power;
}

// The fewest decimals (at most 6) that write x exactly enough.
int decimals_of(double x) {
    for (int d = 0; d < 6; ++d) {
        const double scaled = std::abs(x) * std::pow(10.0, d);
        if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
    }
    return 6;
}

std::string fixed(double value, int decimals) {
    if (std::abs(value) < 0.5 * std::pow(10.0, -decimals)) value = 0;  // never "-0"
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

}  // namespace

Ticks nice_ticks(double low, double high, int most) {
    if (high < low) std::swap(low, high);
    if (high - low < 1e-12 * std::max(1.0, std::abs(high))) {
        const double pad = low == 0 ? 1 : std::abs(low) * 0.05;
        low -= low == 0 ? 0 : pad;
        high += pad;
    }
    Ticks t;
    t.step = nice_step((high - low) / std::max(1, most - 1));
    t.low = std::floor(low / t.step + 1e-9) * t.step;
    t.high = std::ceil(high / t.step - 1e-9) * t.step;
    // Rounding the ends outwards can add up to two steps: take the next nice step when that is too many.
    while ((t.high - t.low) / t.step > most + 0.5) {
        t.step = nice_step(t.step * 1.6);
        t.low = std::floor(low / t.step + 1e-9) * t.step;
        t.high = std::ceil(high / t.step - 1e-9) * t.step;
    }
    const long n = std::lround((t.high - t.low) / t.step);
    for (long i = 0; i <= n; ++i) t.values.push_back(t.low + static_cast<double>(i) * t.step);
    return t;
}

std::string decimal_label(double value, double step) {
    return fixed(value, decimals_of(step));
}

std::string count_label(double value) {
    static constexpr struct {
        double scale;
        const char* suffix;
    } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}};
    for (const auto& u : units)
        if (std::abs(value) >= u.scale) {
            const double scaled = value / u.scale;
            return fixed(scaled, decimals_of(scaled)) + u.suffix;
        }
    return fixed(value, decimals_of(value));
}

}  // namespace remat::cli::plotting
