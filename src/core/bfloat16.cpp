#include "remat/core/bfloat16.hpp"

#include "remat/core/error.hpp"

namespace remat {

// Branch-free, so that the compiler vectorises it: the same bits as the scalar rule.
void to_bfloat16(std::span<const float> in, std::span<std::uint16_t> out) {
    if (in.size() != out.size())
        throw ValueError("to_bfloat16: " + std::to_string(in.size()) + " floats into " + std::to_string(out.size()) + " bfloat16s");
    const float* x = in.data();
    std::uint16_t* y = out.data();
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(x[i]);
        const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
        y[i] = static_cast<std::uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? 0xFFFFu : rounded);
    }
}

}  // namespace remat
