#pragma once
// NumPy broadcasting for binary element-wise ops (private to src/).
#include <string>

#include "remat/core/error.hpp"

namespace remat::ops::detail {

// The broadcast shape of a and b, or ShapeError naming `op` and both shapes.
Shape broadcast_shape(const char* op, const Shape& a, const Shape& b);

// Strides (in elements) for reading `from` as if it had shape `to`: 0 along broadcast axes.
std::vector<std::size_t> broadcast_strides(const Shape& from, const Shape& to);

// Visits every element of shape `to` in row-major order as f(flat_index, offset_a, offset_b).
template <class F>
void for_each_broadcast(const Shape& to, const std::vector<std::size_t>& sa, const std::vector<std::size_t>& sb,
                        F&& f) {
    const std::size_t rank = to.size(), n = element_count(to);
    std::vector<std::size_t> index(rank, 0);
    std::size_t oa = 0, ob = 0;
    for (std::size_t flat = 0; flat < n; ++flat) {
        f(flat, oa, ob);
        for (std::size_t d = rank; d-- > 0;) {  // odometer
            if (++index[d] < to[d]) {
                oa += sa[d];
                ob += sb[d];
                break;
            }
            oa -= sa[d] * (to[d] - 1);
            ob -= sb[d] * (to[d] - 1);
            index[d] = 0;
        }
    }
}

// When `small` equals the trailing dims of `large` (a bias against a batch of rows), the number of
// elements of `small` (> 0); otherwise 0.
std::size_t suffix_length(const Shape& small, const Shape& large);

// into (shape s) += g (shape `to`, broadcast from s): sums g over the broadcast axes, in index order.
void accumulate_unbroadcast(Tensor& into, const Tensor& g);

}  // namespace remat::ops::detail
