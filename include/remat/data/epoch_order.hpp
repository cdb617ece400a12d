#pragma once
// The order in which an epoch visits n windows: a bijection of [0, n) that is a pure function of
// (seed, epoch), computed per index in O(1) memory, so that a run's data position is just (epoch,
// index) and a resumed run draws the same windows. A keyed Feistel network (6 rounds of Philox4x32-10,
// core/random.hpp) permutes the 2h-bit numbers, 4^h the smallest power of four >= n; an image at or
// beyond n is fed through again (cycle-walking) until it falls below n, which takes fewer than 4 rounds
// on average.
#include <array>
#include <cstdint>

namespace remat::data {

class EpochOrder {
public:
    EpochOrder(std::uint64_t seed, std::uint64_t epoch, std::uint64_t n);
    std::uint64_t size() const { return n_; }
    // The window visited i-th; ValueError unless i < size().
    std::uint64_t operator[](std::uint64_t i) const;

private:
    std::uint64_t n_;
    unsigned half_bits_ = 0;
    std::array<std::uint32_t, 2> key_{};
    std::uint64_t permute(std::uint64_t x) const;
};

}  // namespace remat::data
