// LoRA's down projection, scale · dropout(x)·Aᵀ, without dropout(x) ever existing as a tensor: the
// mask is drawn tile by tile (ops::dropout's mask, element for element) and applied to a tile of x
// small enough to stay in cache, which is multiplied at once; backward reads it back from a byte per
// element. A LoRA step
// has seven of these per layer, each over a (tokens, in) activation: the passes saved are most of
// what the adapters cost (docs/lora.md, "Speed and memory").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common.hpp"
#include "gemm.hpp"
#include "parallel.hpp"
#include "remat/ops/linalg.hpp"
#include "src/core/vector_clones.hpp"

namespace remat::ops {
using namespace detail;

namespace {

// Tiles are cut by the shape alone (never by the thread count), so each tile's product, and so every
// bit of the result, is the same on any number of threads.
constexpr std::size_t tile_elements = std::size_t{1} << 16;  // 256 KiB of floats: in L2 beside its mask
constexpr std::size_t column_chunk = 256;                     // backward's column pieces

std::size_t tile_rows(std::size_t width) { return std::clamp<std::size_t>(tile_elements / width, 1, 256); }

// A scratch buffer per thread, grown once: a tile is allocated and freed thousands of times a step.
template <class T>
T* scratch(std::vector<T>& buffer, std::size_t n) {
    if (buffer.size() < n) buffer.resize(n);
    return buffer.data();
}

// ops::dropout keeps an element when its bits, as a float in [0, 1) from their top 24, are at least p
// (dropout_keeps): the same test as an integer one, which vectorises — p · 2^24 is exact in float.
std::uint32_t keep_threshold(float p) { return static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 0x1p24)); }

// keep[i] = 1 where ops::dropout keeps element first + i of the stream, 0 where it drops it.
REMAT_VECTOR_CLONES
void keeps_of(const std::uint32_t* bits, std::uint32_t threshold, std::uint8_t* keep, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) keep[i] = (bits[i] >> 8) >= threshold;
}
void draw_keeps(const Generator::State& state, std::size_t first, std::size_t n, std::uint32_t threshold, std::uint8_t* keep) {
    thread_local std::vector<std::uint32_t> bits_buffer;
    const std::size_t first_block = first / 4, blocks = (first + n + 3) / 4 - first_block;
    std::uint32_t* bits = scratch(bits_buffer, 4 * blocks);
    block_bits(state, first_block, blocks, bits);
    keeps_of(bits + (first - 4 * first_block), threshold, keep, n);
}

// x · keep_scale where kept, 0 where dropped (as ops::dropout: 0 even for an infinite x).
REMAT_VECTOR_CLONES
void drop(const float* x, const std::uint8_t* keep, float keep_scale, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = keep[i] ? x[i] * keep_scale : 0.0f;
}

// dx += d · keep_scale where the element was kept (as ops::dropout's backward: a dropped element's
// gradient is left as it was, even when d is not finite).
REMAT_VECTOR_CLONES
void add_kept(const float* d, const std::uint8_t* keep, float keep_scale, float* dx, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dx[i] = keep[i] ? dx[i] + d[i] * keep_scale : dx[i];
}

void scale_in_place(float* data, std::size_t n, float s) {
    if (s != 1.0f)
        for (std::size_t i = 0; i < n; ++i) data[i] *= s;
}

struct Geometry {
    std::size_t M, in, r;
};

// The forward's mask, a byte per element (a quarter of what dropout(x) would take), kept for backward
// so that it is drawn once: Philox is most of what a mask costs.
using KeptMask = std::vector<std::uint8_t, memory::TrackingAllocator<std::uint8_t>>;

// down (M, r) = dropout(x)·Aᵀ, tile by tile of whole rows; the mask into `kept` when given.
void forward_dropped(const Geometry& s, const float* x, const float* a, const Generator::State& state,
                     std::uint32_t threshold, float keep_scale, float* down, KeptMask* kept) {
    const std::size_t rows = tile_rows(s.in), tiles = (s.M + rows - 1) / rows;
    parallel_for(tiles, [&](std::size_t t) {
        thread_local std::vector<float> tile_buffer;
        thread_local std::vector<std::uint8_t> keep_buffer;
        const std::size_t r0 = t * rows, n = std::min(rows, s.M - r0) * s.in, first = r0 * s.in;
        float* tile = scratch(tile_buffer, n);
        std::uint8_t* keep = kept ? kept->data() + first : scratch(keep_buffer, n);
        draw_keeps(state, first, n, threshold, keep);
        drop(x + first, keep, keep_scale, tile, n);
        gemm_here(false, true, n / s.in, s.r, s.in, tile, s.in, a, s.in, 0.0f, down + r0 * s.r, s.r);
    });
}

// dA (r, in) += ddownᵀ · dropout(x) and dx (M, in) += dropout's backward of ddown · A, by chunks of
// columns: every element of dA and dx belongs to one chunk, whose sums over the rows run in order. The
// mask from `kept`, or drawn again (a selective policy's kept output was reused: no forward ran).
void backward_dropped(const Geometry& s, const float* x, const float* a, const float* ddown, const Generator::State& state,
                      std::uint32_t threshold, float keep_scale, const KeptMask* kept, float* dx, float* da) {
    const std::size_t chunks = (s.in + column_chunk - 1) / column_chunk;
    parallel_for(chunks, [&](std::size_t c) {
        thread_local std::vector<float> tile_buffer;
        thread_local std::vector<std::uint8_t> keep_buffer;
        const std::size_t c0 = c * column_chunk, width = std::min(column_chunk, s.in - c0);
        const std::size_t rows = tile_rows(width);
        float* tile = scratch(tile_buffer, rows * width);
        std::uint8_t* drawn = scratch(keep_buffer, width);
        for (std::size_t r0 = 0; r0 < s.M; r0 += rows) {
            const std::size_t n = std::min(rows, s.M - r0);
            auto keep = [&](std::size_t i) -> const std::uint8_t* {  // row r0 + i's mask over the chunk
                const std::size_t first = (r0 + i) * s.in + c0;
                if (kept) return kept->data() + first;
                draw_keeps(state, first, width, threshold, drawn);
                return drawn;
            };
            if (da) {
                for (std::size_t i = 0; i < n; ++i)
                    drop(x + (r0 + i) * s.in + c0, keep(i), keep_scale, tile + i * width, width);
                gemm_here(true, false, s.r, width, n, ddown + r0 * s.r, s.r, tile, width, 1.0f, da + c0, s.in);
            }
            if (dx) {
                gemm_here(false, false, n, width, s.r, ddown + r0 * s.r, s.r, a + c0, s.in, 0.0f, tile, width);
                for (std::size_t i = 0; i < n; ++i)
                    add_kept(tile + i * width, keep(i), keep_scale, dx + (r0 + i) * s.in + c0, width);
            }
        }
    });
}

}  // namespace

Var dropout_linear(const Var& x, const Var& a, float scale, float p, Generator* generator) {
    if (a.dim() != 2) throw ShapeError("dropout_linear: weight must be 2-d (r, in), got " + to_string(a.shape()));
    if (x.dim() < 1 || x.shape().back() != a.shape()[1])
        throw ShapeError("dropout_linear: input features " + to_string(x.shape()) + " do not match weight " +
                         to_string(a.shape()) + " (r, in)");
    if (!(p >= 0.0f && p <= 1.0f)) throw ValueError("dropout_linear: p must be in [0, 1], got " + std::to_string(p));
    if (p > 0.0f && !generator) throw ValueError("dropout_linear: dropout needs a generator");
    const Geometry s{leading_rows(x.shape()), a.shape()[1], a.shape()[0]};
    const bool drops = p > 0.0f;
    // Drawn whether or not a kept output is reused below: the dropouts after this one draw the same.
    const Generator::State state = drops ? generator->skip((s.M * s.in + 3) / 4) : Generator::State{};
    const float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    Shape ys = x.shape();
    ys.back() = s.r;
    const ad::OpKind kind = s.r < s.in ? ad::OpKind::narrowing : ad::OpKind::projection;
    auto xv = x.shared_value();
    auto av = a.shared_value();
    const bool records = ad::should_record(x, a);
    const std::uint32_t threshold = keep_threshold(p);
    std::shared_ptr<KeptMask> mask;
    std::shared_ptr<const Tensor> y = kept_or_compute(kind, ys, [&] {
        Tensor down = empty(ys);
        if (drops && records) mask = std::make_shared<KeptMask>(s.M * s.in);
        if (drops)
            forward_dropped(s, xv->data(), av->data(), state, threshold, keep_scale, down.data(), mask.get());
        else
            gemm(false, true, s.M, s.r, s.in, xv->data(), av->data(), 0.0f, down.data());
        scale_in_place(down.data(), down.size(), scale);
        return down;
    });
    if (!records) return Var(std::move(y));
    return ad::record(kind, std::move(y), {x, a},
                      [xv, av, s, drops, state, threshold, keep_scale, scale, mask = std::shared_ptr<const KeptMask>(std::move(mask))](
                          const Tensor& dy, ad::Grads& g) {
        Tensor scaled;
        const float* ddown = dy.data();
        if (scale != 1.0f) {
            scaled = dy;
            scale_in_place(scaled.data(), scaled.size(), scale);
            ddown = scaled.data();
        }
        float* dx = g.wants(0) ? g[0].data() : nullptr;
        float* da = g.wants(1) ? g[1].data() : nullptr;
        if (drops) {
            backward_dropped(s, xv->data(), av->data(), ddown, state, threshold, keep_scale, mask.get(), dx, da);
            return;
        }
        if (dx) gemm(false, false, s.M, s.in, s.r, ddown, av->data(), 1.0f, dx);
        if (da) gemm(true, false, s.r, s.in, s.M, ddown, xv->data(), 1.0f, da);
    });
}

}  // namespace remat::ops
