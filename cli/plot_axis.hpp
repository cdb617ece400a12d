#pragma once
// An axis's "nice" ticks (steps of 1, 2, 2.5 or 5 times a power of ten, Heckbert's rule) and their
// labels: plain decimals for the loss, SI-style suffixes for token counts (0, 250k, 1.5M, 2B).
#include <string>
#include <vector>

namespace remat::cli::plotting {

struct Ticks {
    double low = 0, high = 1, step = 1;  // the axis spans [low, high], both multiples of step
    std::vector<double> values;          // low, low + step, …, high
};

// At most about `most` ticks covering [low, high]; an empty range is widened around its value.
Ticks nice_ticks(double low, double high, int most);

// value with the decimals that step needs, all ticks alike: 2.5, 3.0, 3.5.
std::string decimal_label(double value, double step);

// value scaled by the largest of k (1e3), M (1e6), B (1e9), T (1e12) not above it, with no more
// decimals than it needs: 0, 500, 250k, 1M, 1.25M, 2B.
std::string count_label(double value);

}  // namespace remat::cli::plotting
