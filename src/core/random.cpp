#include "remat/core/random.hpp"

#include <cmath>

#include "src/core/vector_clones.hpp"

namespace remat {

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> c, std::array<std::uint32_t, 2> k) {
    constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    for (int round = 0; round < 10; ++round) {
        std::uint64_t p0 = std::uint64_t{M0} * c[0];
        std::uint64_t p1 = std::uint64_t{M1} * c[2];
        auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
        auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
        c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
        k[0] += W0;
        k[1] += W1;
    }
    return c;
}

std::array<std::uint32_t, 4> block_bits(Generator::State s, std::uint64_t index) {
    std::uint64_t block = s.offset + index;
    return philox4x32({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), 0u, 0u},
                      {static_cast<std::uint32_t>(s.key), static_cast<std::uint32_t>(s.key >> 32)});
}

REMAT_VECTOR_CLONES
void block_bits(Generator::State s, std::uint64_t first, std::size_t count, std::uint32_t* out) {
    // philox4x32 on L counters at once, one array per word, so that each round is a vector loop.
    constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    constexpr std::size_t L = 16;
    for (std::size_t done = 0; done < count; done += L) {
        std::uint32_t c0[L], c1[L], c2[L] = {}, c3[L] = {};
        for (std::size_t l = 0; l < L; ++l) {
            const std::uint64_t block = s.offset + first + done + l;
            c0[l] = static_cast<std::uint32_t>(block);
            c1[l] = static_cast<std::uint32_t>(block >> 32);
        }
        auto k0 = static_cast<std::uint32_t>(s.key), k1 = static_cast<std::uint32_t>(s.key >> 32);
        for (int round = 0; round < 10; ++round) {
            for (std::size_t l = 0; l < L; ++l) {
                const std::uint64_t p0 = std::uint64_t{M0} * c0[l], p1 = std::uint64_t{M1} * c2[l];
                const std::uint32_t next0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
                const std::uint32_t next2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
                c1[l] = static_cast<std::uint32_t>(p1);
                c3[l] = static_cast<std::uint32_t>(p0);
                c0[l] = next0;
                c2[l] = next2;
            }
            k0 += W0;
            k1 += W1;
        }
        const std::size_t n = count - done < L ? count - done : L;
        for (std::size_t l = 0; l < n; ++l) {
            std::uint32_t* words = out + 4 * (done + l);
            words[0] = c0[l];
            words[1] = c1[l];
            words[2] = c2[l];
            words[3] = c3[l];
        }
    }
}

void Generator::fill_bits(std::uint32_t* out, std::size_t n) {
    std::size_t blocks = (n + 3) / 4;
    State s = skip(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
        auto bits = block_bits(s, b);
        for (std::size_t j = 0; j < 4 && 4 * b + j < n; ++j) out[4 * b + j] = bits[j];
    }
}

static float to_unit(std::uint32_t x) { return static_cast<float>(x >> 8) * 0x1p-24f; }

void Generator::fill_uniform(float* out, std::size_t n) {
    std::size_t blocks = (n + 3) / 4;
    State s = skip(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
        auto bits = block_bits(s, b);
        for (std::size_t j = 0; j < 4 && 4 * b + j < n; ++j) out[4 * b + j] = to_unit(bits[j]);
    }
}

void Generator::fill_normal(float* out, std::size_t n, float mean, float std) {
    // Each block gives two pairs (u1, u2), each pair two normals.
    std::size_t blocks = (n + 3) / 4;
    State s = skip(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
        auto bits = block_bits(s, b);
        for (std::size_t pair = 0; pair < 2; ++pair) {
            double u1 = (static_cast<double>(bits[2 * pair] >> 8) + 1.0) * 0x1p-24;  // (0, 1]
            double u2 = static_cast<double>(bits[2 * pair + 1] >> 8) * 0x1p-24;
            double r = std::sqrt(-2.0 * std::log(u1));
            double z[2] = {r * std::cos(2.0 * M_PI * u2), r * std::sin(2.0 * M_PI * u2)};
            for (std::size_t j = 0; j < 2; ++j) {
                std::size_t i = 4 * b + 2 * pair + j;
                if (i < n) out[i] = mean + std * static_cast<float>(z[j]);
            }
        }
    }
}

Generator Generator::fork(std::uint64_t stream) const {
    // Counter words 2 and 3 are zero in every block the stream draws (block indices are 64-bit), so
    // a nonzero tag there keeps derived keys out of the space of drawn numbers.
    constexpr std::uint32_t tag = 0x666f726b;  // "fork"
    auto bits = philox4x32({static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32), tag, 1u},
                           {static_cast<std::uint32_t>(state_.key), static_cast<std::uint32_t>(state_.key >> 32)});
    return Generator(std::uint64_t{bits[0]} | std::uint64_t{bits[1]} << 32);
}

std::shared_ptr<Generator> default_generator() {
    static auto shared = std::make_shared<Generator>(0x5EED);
    return shared;
}

}  // namespace remat
