#pragma once
// Var: a value flowing through differentiable code. It shares its (immutable) tensor and, when the
// backend records it, carries the slot where its gradient accumulates.
#include <cstdint>
#include <memory>

#include "remat/core/error.hpp"
#include "remat/core/tensor.hpp"

namespace remat {

class Var {
public:
    Var() = default;
    // A constant: no gradient flows into it.
    explicit Var(Tensor value) : value_(std::make_shared<const Tensor>(std::move(value))) {}
    explicit Var(std::shared_ptr<const Tensor> value) : value_(std::move(value)) {}

    const Tensor& value() const { return *value_; }
    const std::shared_ptr<const Tensor>& shared_value() const { return value_; }
    const Shape& shape() const { return value_->shape(); }
    std::size_t dim() const { return value_->dimension(); }
    std::size_t size() const { return value_->size(); }
    bool defined() const { return value_ != nullptr; }
    // The one element of a one-element value (a loss), as PyTorch's .item(); anything else throws
    // ShapeError naming the shape, rather than silently reading the first element.
    float item() const {
        if (!value_) throw ValueError("item: the Var holds no value");
        if (value_->size() != 1)
            throw ShapeError("item: expected a value with one element, got shape " + to_string(value_->shape()));
        return *value_->data();
    }
    // Gradients flow into this value (it was recorded by the current tape).
    bool requires_grad() const { return slot_ >= 0; }

    // Backend bookkeeping: which slot of which recording this value belongs to.
    std::int64_t slot() const { return slot_; }
    std::uint64_t epoch() const { return epoch_; }
    Var with_slot(std::int64_t slot, std::uint64_t epoch) const {
        Var v = *this;
        v.slot_ = slot;
        v.epoch_ = epoch;
        return v;
    }

private:
    std::shared_ptr<const Tensor> value_;
    std::int64_t slot_ = -1;
    std::uint64_t epoch_ = 0;
};

inline float item(const Var& v) { return v.item(); }

}  // namespace remat
