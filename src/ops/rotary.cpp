#include "remat/ops/rotary.hpp"

#include <memory>

#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// One position's row of H heads: y = x·cos + rotate_half(x)·sin.
REMAT_VECTOR_CLONES
void rotate_row(const float* x, const float* c, const float* s, float* y, std::size_t H, std::size_t D) {
    const std::size_t half = D / 2;
    for (std::size_t h = 0; h < H; ++h, x += D, y += D) {
        for (std::size_t j = 0; j < half; ++j) y[j] = x[j] * c[j] - x[j + half] * s[j];
        for (std::size_t j = half; j < D; ++j) y[j] = x[j] * c[j] + x[j - half] * s[j];
    }
}

// The transpose: dx += dy·cos + rotate_halfᵀ(dy·sin), rotate_halfᵀ([z₁, z₂]) = [z₂, −z₁].
REMAT_VECTOR_CLONES
void rotate_row_back(const float* dy, const float* c, const float* s, float* dx, std::size_t H, std::size_t D) {
    const std::size_t half = D / 2;
    for (std::size_t h = 0; h < H; ++h, dy += D, dx += D) {
        for (std::size_t j = 0; j < half; ++j) dx[j] += dy[j] * c[j] + dy[j + half] * s[j + half];
        for (std::size_t j = half; j < D; ++j) dx[j] += dy[j] * c[j] - dy[j - half] * s[j - half];
    }
}
}  // namespace

Var rotary(const Var& x, const Tensor& cos, const Tensor& sin) {
    if (x.dim() != 3) throw ShapeError("rotary: expected x (B, T, H·D), got " + to_string(x.shape()));
    const std::size_t B = x.shape()[0], T = x.shape()[1], W = x.shape()[2];
    const bool per_row = cos.dimension() == 3;  // (B, T, D): each sequence its own positions
    const bool shapes_ok = per_row ? cos.shape()[0] == B && cos.shape()[1] == T : cos.dimension() == 2 && cos.shape()[0] >= T;
    if (!shapes_ok || cos.shape() != sin.shape())
        throw ShapeError("rotary: expected cos and sin (T, D) with T ≥ " + std::to_string(T) + " or (" + std::to_string(B) + ", " +
                         std::to_string(T) + ", D), got " + to_string(cos.shape()) + " and " + to_string(sin.shape()));
    const std::size_t D = cos.shape()[cos.dimension() - 1];
    if (D == 0 || D % 2 != 0 || W % D != 0)
        throw ShapeError("rotary: " + std::to_string(W) + " features do not split into heads of an even size " +
                         std::to_string(D));
    const std::size_t H = W / D, period = per_row ? B * T : T;  // row r of x reads table row r % period
    auto c = share(Tensor(cos)), s = share(Tensor(sin));  // kept for backward: the caller's may change
    Tensor y = empty(x.shape());
    const float* in = x.value().data();
    parallel_ranges(B * T, rows_grain(W), [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) {
            const std::size_t t = r % period;
            rotate_row(in + r * W, c->data() + t * D, s->data() + t * D, y.data() + r * W, H, D);
        }
    });
    if (!ad::should_record(x)) return Var(std::move(y));
    return ad::record(ad::OpKind::elementwise, share(std::move(y)), {x},
                      [c, s, B, T, W, H, D, period](const Tensor& dy, ad::Grads& g) {
                          float* dx = g[0].data();
                          parallel_ranges(B * T, rows_grain(W), [&](std::size_t begin, std::size_t end) {
                              for (std::size_t r = begin; r < end; ++r) {
                                  const std::size_t t = r % period;
                                  rotate_row_back(dy.data() + r * W, c->data() + t * D, s->data() + t * D, dx + r * W,
                                                  H, D);
                              }
                          });
                      });
}

}  // namespace remat::ops
