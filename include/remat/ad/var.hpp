#pragma once
// Var: a value flowing through differentiable code. It shares its (immutable) tensor and, when the
// backend records it, carries the slot where its gradient accumulates — and a handle that keeps that
// slot's recording alive: when the last Var (and the last recorded op) that can reach a recorded
// subgraph goes away, the tape frees it, as PyTorch frees a graph nothing refers to. A recorded Var
// belongs to the thread whose tape recorded it: destroy it there.
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

    // Backend bookkeeping: which slot of which recording this value belongs to. `epoch` is the
    // backend's tag for the slot (the tape's: a serial number no other slot ever had).
    std::int64_t slot() const { return slot_; }
    std::uint64_t epoch() const { return epoch_; }
    // The same value recorded in `slot`; `handle` keeps the slot alive while any copy of the Var is.
    Var recorded(std::int64_t slot, std::uint64_t epoch, std::shared_ptr<const void> handle) const {
        Var v(value_);
        v.slot_ = slot;
        v.epoch_ = epoch;
        v.handle_ = std::move(handle);
        return v;
    }
    // As recorded() without a handle: the Var keeps nothing alive (the tape refuses it once the slot
    // is freed). Kept for backends that do not free recordings.
    Var with_slot(std::int64_t slot, std::uint64_t epoch) const { return recorded(slot, epoch, nullptr); }

private:
    std::shared_ptr<const Tensor> value_;
    std::shared_ptr<const void> handle_;
    std::int64_t slot_ = -1;
    std::uint64_t epoch_ = 0;
};

inline float item(const Var& v) { return v.item(); }

}  // namespace remat
