#pragma once
// Counter-based random numbers (Philox4x32-10): the n-th number depends only on (key, n), so a
// generator's whole state is 16 bytes, a snapshot is a copy, and masks are independent of threading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace remat {

// One Philox4x32-10 block: four 32-bit words from a 128-bit counter and a 64-bit key.
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter, std::array<std::uint32_t, 2> key);

class Generator {
public:
    struct State {
        std::uint64_t key = 0;
        std::uint64_t offset = 0;  // 128-bit blocks consumed so far
        bool operator==(const State&) const = default;
    };

    explicit Generator(std::uint64_t seed = 0) : state_{seed, 0} {}

    State state() const { return state_; }
    void set_state(State s) { state_ = s; }
    void seed(std::uint64_t seed) { state_ = {seed, 0}; }

    // Raw 32-bit words; consumes ceil(n / 4) blocks.
    void fill_bits(std::uint32_t* out, std::size_t n);
    // Uniform in [0, 1) with 24 random bits; consumes ceil(n / 4) blocks.
    void fill_uniform(float* out, std::size_t n);
    // Standard normal (Box–Muller); consumes ceil(n / 4) blocks.
    void fill_normal(float* out, std::size_t n, float mean = 0.0f, float std = 1.0f);
    // Advances the stream by `blocks` blocks and returns the state before, for kernels that draw
    // block i themselves (dropout) — the same numbers fill_bits would have produced.
    State skip(std::uint64_t blocks) {
        State before = state_;
        state_.offset += blocks;
        return before;
    }
    // An independent generator for `stream`, keyed by (this key, stream) alone — as JAX splits a
    // key: it draws nothing from this generator and does not depend on how far this one has drawn,
    // so per-layer, per-model or per-thread generators follow from one seed in any order.
    Generator fork(std::uint64_t stream) const;

private:
    State state_;
};

// Bits for block `index` of the stream with state `s` (block s.offset + index).
std::array<std::uint32_t, 4> block_bits(Generator::State s, std::uint64_t index);
// The same for blocks [first, first + count): 4 · count words into `out`, block by block — the
// words block_bits gives one at a time, computed many blocks at once (vectorised).
void block_bits(Generator::State s, std::uint64_t first, std::size_t count, std::uint32_t* out);

// The generator every Dropout shares unless given its own (as in Flux).
std::shared_ptr<Generator> default_generator();

}  // namespace remat
