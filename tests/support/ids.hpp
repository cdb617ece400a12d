#pragma once
// A (B, T) batch of token ids written out row by row: ids_of({{1, 2, 3}, {4, 5, 6}}).
#include <initializer_list>

#include "remat/core/tensor.hpp"

namespace remat::test {

inline IdTensor ids_of(std::initializer_list<std::initializer_list<std::int64_t>> rows) {
    IdTensor t = IdTensor::from_shape({rows.size(), rows.begin()->size()});
    std::size_t b = 0;
    for (auto row : rows) {
        std::size_t i = 0;
        for (auto v : row) t(b, i++) = v;
        ++b;
    }
    return t;
}

}  // namespace remat::test
