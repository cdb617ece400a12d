#include "remat/core/param.hpp"

#include <span>

#include "remat/core/bfloat16.hpp"
#include "remat/core/error.hpp"

namespace remat {

void Param::hold_bf16() {
    if (bf16_) throw ValueError("hold_bf16: the parameter is already held in bf16");
    if (!frozen) throw ValueError("hold_bf16: only a frozen parameter may be held in bf16 (an update needs float32 values)");
    auto held = std::make_shared<HeldBf16>();
    held->shape = value.shape();
    held->values.resize(value.size());
    to_bfloat16(std::span<const float>(value.data(), value.size()), held->values);
    bf16_ = std::move(held);
    value = empty(Shape{0});  // the float32 memory returned (hold before recording: a recording reads `value`)
}

void Param::release_bf16() {
    if (!bf16_) return;
    Tensor widened = empty(bf16_->shape);
    for (std::size_t i = 0; i < widened.size(); ++i) widened.data()[i] = from_bfloat16(bf16_->values[i]);
    value = std::move(widened);
    bf16_.reset();
}

}  // namespace remat
