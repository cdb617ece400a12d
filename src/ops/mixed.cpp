#include "mixed.hpp"

#include <algorithm>
#include <span>

#include "gemm.hpp"
#include "parallel.hpp"
#include "remat/core/bfloat16.hpp"

namespace remat::ops::detail {

namespace {
std::shared_ptr<const Bf16Values> converted(const Tensor& values) {
    auto copy = std::make_shared<Bf16Values>(values.size());
    const float* in = values.data();
    std::uint16_t* out = copy->data();
    parallel_ranges(values.size(), elementwise_grain, [&](std::size_t begin, std::size_t end) {
        to_bfloat16(std::span<const float>(in + begin, end - begin), std::span<std::uint16_t>(out + begin, end - begin));
    });
    return copy;
}
}  // namespace

std::shared_ptr<const Bf16Values> Bf16Cache::find(const std::shared_ptr<const Tensor>& values) {
    for (auto& [key, entry] : entries_)
        if (key == values.get() && !entry.source.expired()) return entry.kept ? entry.kept : entry.copy.lock();
    return nullptr;
}

void Bf16Cache::keep(const std::shared_ptr<const Tensor>& values, std::shared_ptr<const Bf16Values> copy, Role role) {
    if (values.use_count() == 0) return;  // a borrowed tensor: nothing tells when it dies
    std::erase_if(entries_, [&](const auto& e) { return e.first == values.get() || e.second.source.expired() ||
                                                        (!e.second.kept && e.second.copy.expired()); });
    entries_.push_back({values.get(), Entry{values, copy, role == Role::weight ? copy : nullptr}});
}

Operand operand(const std::shared_ptr<const Tensor>& values, Precision p, Role role) {
    if (p == Precision::fp32) return {values->data(), nullptr, values};
    Bf16Cache* cache = current_bf16_cache();
    auto copy = cache ? cache->find(values) : nullptr;
    if (!copy) {
        copy = converted(*values);
        if (cache) cache->keep(values, copy, role);
    }
    return {nullptr, copy->data(), copy};
}

Operand operand(const Tensor& values, Precision p) {
    if (p == Precision::fp32) return {values.data(), nullptr, nullptr};
    auto copy = converted(values);
    return {nullptr, copy->data(), copy};
}

void gemm(bool transpose_a, bool transpose_b, std::size_t M, std::size_t N, std::size_t K, const Operand& A,
          const Operand& B, float beta, float* C) {
    if (A.bf16 && B.bf16)
        gemm_bf16(transpose_a, transpose_b, M, N, K, A.bf16, B.bf16, beta, C);
    else
        gemm(transpose_a, transpose_b, M, N, K, A.f32, B.f32, beta, C);
}

}  // namespace remat::ops::detail
