#include "broadcast.hpp"

#include <algorithm>

#include "parallel.hpp"

namespace remat::ops::detail {

Shape broadcast_shape(const char* op, const Shape& a, const Shape& b) {
    const std::size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::size_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const std::size_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1)
            throw ShapeError(std::string(op) + ": shapes cannot be broadcast together: " + to_string(a) + " and " +
                             to_string(b));
        out[i] = da == 1 ? db : da;
    }
    return out;
}

std::vector<std::size_t> broadcast_strides(const Shape& from, const Shape& to) {
    std::vector<std::size_t> strides(to.size(), 0);
    std::size_t stride = 1;
    for (std::size_t i = from.size(); i-- > 0;) {
        const std::size_t axis = i + (to.size() - from.size());
        strides[axis] = from[i] == 1 ? 0 : stride;
        stride *= from[i];
    }
    return strides;
}

std::size_t suffix_length(const Shape& small, const Shape& large) {
    if (small.empty() || small.size() > large.size()) return 0;
    if (!std::equal(small.begin(), small.end(), large.end() - static_cast<std::ptrdiff_t>(small.size()))) return 0;
    return element_count(small);
}

void accumulate_unbroadcast(Tensor& into, const Tensor& g) {
    float* d = into.data();
    const float* s = g.data();
    if (into.shape() == g.shape()) {
        parallel_ranges(g.size(), elementwise_grain, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) d[i] += s[i];
        });
        return;
    }
    if (const std::size_t n = suffix_length(into.shape(), g.shape())) {
        // Rows in order: the same summation order as the general path below.
        add_column_sums(s, g.size() / n, n, d);
        return;
    }
    const auto strides = broadcast_strides(into.shape(), g.shape());
    const std::vector<std::size_t> none(g.dimension(), 0);
    for_each_broadcast(g.shape(), strides, none, [&](std::size_t flat, std::size_t o, std::size_t) { d[o] += s[flat]; });
}

}  // namespace remat::ops::detail
