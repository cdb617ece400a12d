#pragma once
// Param: a trainable tensor. A plain Tensor member of a layer is a buffer (state that is saved and
// loaded but not trained, such as BatchNorm's running mean); a Param is a parameter. As a
// differentiable value it is ad::leaf(param) (remat/ad/backend.hpp).
//
// Its tensor lives on the heap, shared with whatever recorded it: `value` names the same Tensor
// object however often the Param (or the model holding it) is moved, so the tape's gradients —
// tape.grad(p.value) — and the values a pending backward reads survive moving the model between
// forward and backward, a std::vector of models reallocating, even the model being destroyed.
//
//   Param b = a;             copies the tensor (a new parameter)
//   Param b = std::move(a);  b takes a's tensor, never copying it; a still names it until assigned
//   b = std::move(a);        b becomes a's parameter (its old tensor is left to what recorded it)
//   b = a;                   b keeps its identity and takes a copy of a's values, as b.value = a.value
//
// A frozen parameter may be held as bfloat16 only (hold_bf16): half its memory, for a frozen base
// under LoRA (docs/lora.md). Its float32 `value` is then released (empty), and the products that read
// it (nn::Linear, nn::Conv1D) run in bf16; anything else that needs float32 values refuses it by name.
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "remat/core/tensor.hpp"

namespace remat {

// A parameter's values rounded to bfloat16 (as Autocast's copies: remat/core/bfloat16.hpp).
struct HeldBf16 {
    Shape shape;
    std::vector<std::uint16_t, memory::TrackingAllocator<std::uint16_t>> values;
};

struct Param final {
private:
    std::shared_ptr<Tensor> storage_;  // declared first: `value` binds to it

public:
    Tensor& value;
    bool frozen = false;  // frozen: read as a constant, gets no gradient and no update

    Param() : Param(Tensor()) {}
    Param(Tensor v, bool frozen_ = false)  // NOLINT: implicit, as the aggregate it replaces allowed {tensor}
        : storage_(std::make_shared<Tensor>(std::move(v))), value(*storage_), frozen(frozen_) {}
    Param(const Param& other) : Param(Tensor(other.value), other.frozen) { bf16_ = other.bf16_; }
    // Shares, never copies: the moved-from Param keeps naming the tensor (a reference cannot be
    // re-seated) until it is assigned.
    Param(Param&& other) noexcept : storage_(other.storage_), value(*storage_), frozen(other.frozen), bf16_(other.bf16_) {}
    Param& operator=(const Param& other) {
        if (this != &other) {
            value = other.value;
            frozen = other.frozen;
            bf16_ = other.bf16_;
        }
        return *this;
    }
    // Re-seats `value` on other's tensor by ending this object and building it again in place
    // (C++20 makes the old name refer to the new object); nothing here can throw.
    Param& operator=(Param&& other) noexcept {
        if (this != &other) {
            Param taken(std::move(other));
            this->~Param();
            ::new (this) Param(std::move(taken));
        }
        return *this;
    }
    ~Param() = default;

    const Shape& shape() const { return bf16_ ? bf16_->shape : value.shape(); }
    std::size_t size() const { return bf16_ ? bf16_->values.size() : value.size(); }

    // Rounds the values to bf16 (to nearest, ties to even) and releases the float32 tensor. ValueError
    // for a parameter that is not frozen (an update needs float32 values) or is already held.
    void hold_bf16();
    // Float32 values again: exactly the bf16 ones, widened. Nothing happens to a parameter not held.
    void release_bf16();
    bool held_bf16() const { return bf16_ != nullptr; }
    // The bf16 values of a held parameter (null otherwise), shared with the products that read them.
    const std::shared_ptr<const HeldBf16>& bf16() const { return bf16_; }
    // The tensor, shared: what the AD backend keeps alive while a recording reads it.
    std::shared_ptr<const Tensor> shared_value() const { return storage_; }

private:
    std::shared_ptr<const HeldBf16> bf16_;  // set while held in bf16 (`value` is then empty)
};

}  // namespace remat
