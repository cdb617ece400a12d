#pragma once
// bfloat16, the top 16 bits of a float32, converted as PyTorch converts it: the bits mixed precision
// (issue 20) feeds the matrix units, and BF16 checkpoints hold.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace remat {

// Round to nearest, ties to even; subnormals kept (oneDNN's reorder flushes them), overflow to ±inf.
// Every NaN becomes 0xFFFF, as Tensor.to(torch.bfloat16) makes it (c10's scalar conversion gives 0x7FC0).
constexpr std::uint16_t to_bfloat16(float x) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFF;
    return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Exact: every bfloat16 is a float.
constexpr float from_bfloat16(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// to_bfloat16 over a buffer; out.size() must equal in.size().
void to_bfloat16(std::span<const float> in, std::span<std::uint16_t> out);

}  // namespace remat
