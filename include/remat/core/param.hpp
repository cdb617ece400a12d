#pragma once
// Param: a trainable tensor. A plain Tensor member of a layer is a buffer (state that is saved and
// loaded but not trained, such as BatchNorm's running mean); a Param is a parameter.
#include <memory>

#include "remat/ad/backend.hpp"

namespace remat {

struct Param {
    Tensor value;
    bool frozen = false;  // frozen: read as a constant, gets no gradient and no update

    const Shape& shape() const { return value.shape(); }
    std::size_t size() const { return value.size(); }
};

// The parameter as a differentiable leaf — or as a constant when frozen. Never copies.
inline Var leaf(const Param& p) {
    if (p.frozen) return Var(std::shared_ptr<const Tensor>(std::shared_ptr<void>(), &p.value));
    return ad::leaf(p.value);
}

}  // namespace remat
