#include "remat/data/epoch_order.hpp"

#include <bit>

#include <string>

#include "remat/core/error.hpp"
#include "remat/core/random.hpp"

namespace remat::data {

namespace {
constexpr int rounds = 6;
}

EpochOrder::EpochOrder(std::uint64_t seed, std::uint64_t epoch, std::uint64_t n) : n_(n) {
    const unsigned bits = n > 1 ? static_cast<unsigned>(std::bit_width(n - 1)) : 0;
    half_bits_ = (bits + 1) / 2;
    // The rounds' key, from (seed, epoch) through one Philox block: epochs of one seed are unrelated.
    const auto k = philox4x32({static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32), 0x45504F43u, 0},
                              {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
    key_ = {k[0], k[1]};
}

std::uint64_t EpochOrder::permute(std::uint64_t x) const {
    const std::uint64_t mask = (std::uint64_t{1} << half_bits_) - 1;
    std::uint64_t left = x >> half_bits_, right = x & mask;
    for (int r = 0; r < rounds; ++r) {
        const std::uint64_t f = philox4x32({static_cast<std::uint32_t>(right), static_cast<std::uint32_t>(r), 0, 0}, key_)[0] & mask;
        const std::uint64_t next = left ^ f;
        left = right;
        right = next;
    }
    return (left << half_bits_) | right;
}

std::uint64_t EpochOrder::operator[](std::uint64_t i) const {
    if (i >= n_) throw ValueError("epoch order: index " + std::to_string(i) + " of " + std::to_string(n_) + " windows");
    if (n_ == 1) return 0;
    std::uint64_t x = permute(i);
    while (x >= n_) x = permute(x);  // the cycle through i returns below n: i itself is
    return x;
}

}  // namespace remat::data
