#include "remat/ops/dropout.hpp"

#include "common.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// Element i is kept by dropout_keeps with the bits of block i/4, lane i%4.
template <class F>
void for_each_kept(Generator::State state, std::size_t n, float p, F&& f) {
    for (std::size_t b = 0; b * 4 < n; ++b) {
        const auto bits = block_bits(state, b);
        for (std::size_t j = 0; j < 4 && 4 * b + j < n; ++j)
            f(4 * b + j, dropout_keeps(bits[j], p));
    }
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
    for_each_kept(state, n, p, [&](std::size_t i, bool kept) { out[i] = kept ? in[i] * keep_scale : 0.0f; });
    if (!ad::should_record(x)) return Var(std::move(y));
    return ad::record(ad::OpKind::dropout, share(std::move(y)), {x}, [state, n, p, keep_scale](const Tensor& dy, ad::Grads& g) {
        float* dx = g[0].data();
        for_each_kept(state, n, p, [&](std::size_t i, bool kept) {
            if (kept) dx[i] += dy.data()[i] * keep_scale;
        });
    });
}

}  // namespace remat::ops
