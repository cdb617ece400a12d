#include "remat/ops/dropout.hpp"

#include <algorithm>

#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// Element i is kept by dropout_keeps with the bits of block i/4, lane i%4. Each element's fate
// depends on its index alone, so the elements are split among the threads and the blocks drawn
// many at a time: the same mask for any thread count. body(first, count, bits) takes the words of
// elements [first, first + count).
template <class Body>
void for_each_chunk(Generator::State state, std::size_t n, Body&& body) {
    constexpr std::size_t chunk = 256;  // blocks drawn at once: 4 KiB of bits, in L1
    parallel_ranges((n + 3) / 4, elementwise_grain / 4, [&](std::size_t begin, std::size_t end) {
        std::uint32_t bits[4 * chunk];
        for (std::size_t b = begin; b < end; b += chunk) {
            const std::size_t blocks = std::min(chunk, end - b);
            block_bits(state, b, blocks, bits);
            body(4 * b, std::min(4 * blocks, n - 4 * b), bits);
        }
    });
}

REMAT_VECTOR_CLONES
void drop(const std::uint32_t* bits, const float* x, float* y, std::size_t n, float p, float keep_scale) {
    for (std::size_t i = 0; i < n; ++i) y[i] = dropout_keeps(bits[i], p) ? x[i] * keep_scale : 0.0f;
}

REMAT_VECTOR_CLONES
void drop_gradient(const std::uint32_t* bits, const float* dy, float* dx, std::size_t n, float p, float keep_scale) {
    for (std::size_t i = 0; i < n; ++i) dx[i] = dropout_keeps(bits[i], p) ? dx[i] + dy[i] * keep_scale : dx[i];
}
}  // namespace

Var dropout(const Var& x, float p, Generator& generator) {
    if (!(p >= 0.0f && p <= 1.0f)) throw ValueError("dropout: p must be in [0, 1], got " + std::to_string(p));
    if (p == 0.0f) return x;
    const std::size_t n = x.size();
    const Generator::State state = generator.skip((n + 3) / 4);
    const float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    Tensor y = empty(x.shape());
    const float* in = x.value().data();
    float* out = y.data();
    for_each_chunk(state, n, [&](std::size_t first, std::size_t count, const std::uint32_t* bits) {
        drop(bits, in + first, out + first, count, p, keep_scale);
    });
    if (!ad::should_record(x)) return Var(std::move(y));
    return ad::record(ad::OpKind::dropout, share(std::move(y)), {x}, [state, n, p, keep_scale](const Tensor& dy, ad::Grads& g) {
        float* dx = g[0].data();
        for_each_chunk(state, n, [&](std::size_t first, std::size_t count, const std::uint32_t* bits) {
            drop_gradient(bits, dy.data() + first, dx + first, count, p, keep_scale);
        });
    });
}

}  // namespace remat::ops
