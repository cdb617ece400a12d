#pragma once
// A supervised example whose labels are its ids but for the first `unlabelled` (the prompt's):
// supervised_example({5, 9, 14}, 2) trains on 14 alone.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "remat/data/supervised.hpp"

namespace remat::test {

inline data::SupervisedExample supervised_example(std::vector<std::int64_t> ids, std::size_t unlabelled) {
    data::SupervisedExample e{ids, ids};
    for (std::size_t i = 0; i < unlabelled; ++i) e.labels[i] = data::ignore_label;
    return e;
}

}  // namespace remat::test
