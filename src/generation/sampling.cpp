#include "remat/generation/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "remat/core/error.hpp"

namespace remat::generation {

namespace {
constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

// A value as a user would write it: "-1", "0.5", "1e-320", not std::to_string's "-1.000000".
std::string shortest(double v) {
    char text[32];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, v);
        if (std::strtod(text, nullptr) == v || std::isnan(v)) break;
    }
    return text;
}
}

void check(const Sampling& s) {
    // A penalty of 0 would divide a logit by zero; below 0 it turns the order over. (HF refuses both.)
    if (!(s.repetition_penalty > 0) || !std::isfinite(s.repetition_penalty))
        throw ValueError("repetition_penalty must be a positive number, got " + shortest(s.repetition_penalty));
    if (!s.do_sample) return;  // greedy: temperature and top_p are not used
    if (!(s.temperature > 0) || !std::isfinite(s.temperature))
        throw ValueError("temperature must be a positive number, got " + shortest(s.temperature));
    if (!(s.top_p > 0 && s.top_p <= 1)) throw ValueError("top_p must be in (0, 1], got " + shortest(s.top_p));
}

std::vector<double> penalized(std::span<const float> logits, std::span<const std::int64_t> seen, double penalty) {
    std::vector<double> x(logits.begin(), logits.end());
    if (penalty == 1.0) return x;
    std::unordered_set<std::int64_t> done;
    for (const std::int64_t id : seen) {
        if (id < 0 || static_cast<std::size_t>(id) >= x.size() || !done.insert(id).second) continue;
        double& v = x[static_cast<std::size_t>(id)];
        v = v < 0 ? v * penalty : v / penalty;
    }
    return x;
}

std::vector<double> distribution(std::span<const float> logits, const Sampling& s, std::span<const std::int64_t> seen) {
    check(s);
    std::vector<double> x = penalized(logits, seen, s.repetition_penalty);
    const std::size_t V = x.size();
    if (V == 0) throw ValueError("sampling: no logits");
    for (double& v : x) v /= s.temperature;
    if (s.top_k > 0 && s.top_k < V) {  // below the k-th largest: removed (ties with it stay)
        std::vector<double> sorted = x;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(s.top_k - 1), sorted.end(), std::greater<>());
        const double kth = sorted[s.top_k - 1];
        for (double& v : x)
            if (v < kth) v = minus_infinity;
    }
    if (s.top_p < 1.0) {  // ascending, HF removes the tokens whose cumulative probability stays ≤ 1 − top_p; the largest always stays
        std::vector<std::size_t> order(V);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
        const double top = x[order.back()];
        double total = 0;
        for (const double v : x) total += std::exp(v - top);
        double cumulative = 0;
        for (std::size_t i = 0; i + 1 < V; ++i) {
            cumulative += std::exp(x[order[i]] - top) / total;
            if (cumulative > 1.0 - s.top_p) break;
            x[order[i]] = minus_infinity;
        }
    }
    const double top = *std::max_element(x.begin(), x.end());
    std::vector<double> p(V);
    double total = 0;
    for (std::size_t i = 0; i < V; ++i) total += p[i] = std::exp(x[i] - top);
    for (double& v : p) v /= total;
    return p;
}

std::int64_t choose(std::span<const float> logits, const Sampling& s, std::span<const std::int64_t> seen, Generator& rng) {
    if (!s.do_sample) {
        const std::vector<double> x = penalized(logits, seen, s.repetition_penalty);
        if (x.empty()) throw ValueError("sampling: no logits");
        return std::max_element(x.begin(), x.end()) - x.begin();
    }
    const std::vector<double> p = distribution(logits, s, seen);
    float u = 0;
    rng.fill_uniform(&u, 1);
    double cumulative = 0;
    std::int64_t last = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0) continue;
        last = static_cast<std::int64_t>(i);
        cumulative += p[i];
        if (static_cast<double>(u) < cumulative) return last;
    }
    return last;  // u beyond the rounded total: the last token with any probability
}

}  // namespace remat::generation
