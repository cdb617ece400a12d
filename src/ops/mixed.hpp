#pragma once
// A product's operands in the precision it runs in (remat/ops/precision.hpp): the fp32 values, or
// their bf16 copy. Products read their operands through this, so that fp32 and bf16 share one path.
#include <cstdint>
#include <memory>
#include <vector>

#include "remat/core/tensor.hpp"
#include "remat/ops/precision.hpp"

namespace remat::ops::detail {

using Bf16Values = std::vector<std::uint16_t, memory::TrackingAllocator<std::uint16_t>>;

// One of the two pointers is set; `owner` keeps what it points into alive (if anything needs to).
struct Operand {
    const float* f32 = nullptr;
    const std::uint16_t* bf16 = nullptr;
    std::shared_ptr<const void> owner;
};

// The operand `offset` elements further on (the i-th matrix of a batch).
inline Operand at(const Operand& o, std::size_t offset) {
    return {o.f32 ? o.f32 + offset : nullptr, o.bf16 ? o.bf16 + offset : nullptr, o.owner};
}

// How long an Autocast scope keeps a tensor's bf16 copy: a weight's for the whole scope (the
// forward, a checkpointed block's recomputation and the backward all read one copy), another
// tensor's while some product still holds it (q, k and v's projections share their input's copy).
enum class Role { weight, activation };

// `values` as a product running in precision p reads it. In bf16 inside an Autocast scope each
// tensor is converted once (Role says for how long it is kept); outside a scope, at every call.
Operand operand(const std::shared_ptr<const Tensor>& values, Precision p, Role role);
// A gradient flowing back: converted at each call, never kept.
Operand operand(const Tensor& values, Precision p);

// C = op(A)·op(B) + beta·C (gemm.hpp), by sgemm or oneDNN as the operands are; both in one precision.
void gemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const Operand& A,
          const Operand& B, float beta, float* C);

// The bf16 copies an Autocast scope keeps (precision.cpp owns the scopes).
class Bf16Cache {
public:
    std::shared_ptr<const Bf16Values> find(const std::shared_ptr<const Tensor>& values);
    void keep(const std::shared_ptr<const Tensor>& values, std::shared_ptr<const Bf16Values> copy, Role role);

private:
    struct Entry {
        std::weak_ptr<const Tensor> source;         // expired: another tensor may now live at the address
        std::weak_ptr<const Bf16Values> copy;
        std::shared_ptr<const Bf16Values> kept;     // weights only
    };
    std::vector<std::pair<const Tensor*, Entry>> entries_;
};
// The innermost Autocast scope's cache on this thread, or nullptr.
Bf16Cache* current_bf16_cache();

}  // namespace remat::ops::detail
