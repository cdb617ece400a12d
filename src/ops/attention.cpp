#include "remat/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "head_gemm.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {

// ---- Geometry ----------------------------------------------------------------------------------

constexpr std::size_t block_rows = 32;  // queries per block: the causal mask skips keys past a block
constexpr float lowest = -std::numeric_limits<float>::infinity();

std::size_t round16(std::size_t n) { return (n + 15) / 16 * 16; }
// Row stride of the workspace matrices for Tk keys: whole vectors, plus one so that rows are not a
// power of two apart (columns read down the rows would fall into the same few cache sets).
std::size_t row_stride(std::size_t Tk) { return round16(Tk) + 16; }

// One of q, k, v (or their gradients): element (b, t, h·D + d) at p[b·batch + t·row + h·D + d].
template <class F>
struct Heads {
    F* p;
    std::size_t row, batch;
    F* at(std::size_t b, std::size_t h, std::size_t D) const { return p + b * batch + h * D; }
};

struct Problem {
    std::size_t B, H, Tq, Tk, D, C;
    std::size_t group;         // query heads per key/value head (GQA): query head h reads kv head h / group
    bool causal;
    std::size_t window;        // 0, or the sliding window W: keys visible(i) − W ≤ k < visible(i)
    bool combined;             // HF's masking_utils: a row that sees no key is uniform over all Tk
    float scale;               // 1/√D
    const float* keep;         // (B, Tk) padding mask or null
    const std::int64_t* starts;  // (B, Tq) first key of each query's sequence (packed sequences) or null
    bool dropout;
    float p, keep_scale;       // dropout probability, 1/(1 − p)
    Generator::State stream;   // dropout's block 0

    std::size_t offset() const { return Tk - Tq; }  // causal: query i sees keys j ≤ i + offset
    std::size_t visible(std::size_t i) const { return causal ? i + 1 + offset() : Tk; }
    // The first key row i sees; starts_row: its batch element's row of `starts`, or null.
    std::size_t first(std::size_t i, const std::int64_t* starts_row) const {
        const std::size_t w = window && visible(i) > window ? visible(i) - window : 0;
        return starts_row ? std::max(w, static_cast<std::size_t>(starts_row[i])) : w;
    }
    // Whether row i of batch b sees no key: every key in [first(i), visible(i)) is padding.
    bool sees_nothing(const float* keep_row, const std::int64_t* starts_row, std::size_t i) const {
        return keep_row && std::all_of(keep_row + first(i, starts_row), keep_row + visible(i), [](float k) { return k == 0.0f; });
    }
    // Whether some row of batch b sees no key: its probabilities then reach past the causal limit,
    // so that batch element is computed without skipping keys.
    bool has_masked_rows(std::size_t b) const {
        if (!keep) return false;
        const float* row = keep + b * Tk;
        const std::int64_t* starts_row = starts ? starts + b * Tq : nullptr;
        if (!window && !starts_row) {  // the visible ranges grow from key 0: row 0 has the fewest keys
            std::size_t first_kept = 0;
            while (first_kept < Tk && row[first_kept] == 0.0f) ++first_kept;
            return visible(0) <= first_kept;
        }
        for (std::size_t i = 0; i < Tq; ++i)
            if (sees_nothing(row, starts_row, i)) return true;
        return false;
    }
};

// Thread-local workspace, kept between calls (like BLAS buffers): the packed kᵀ and vᵀ of one head,
// the scores of one block of queries and their gradients, one row of dropout factors.
struct Workspace {
    float* data = nullptr;
    std::size_t capacity = 0;
    ~Workspace() { std::free(data); }
    float* get(std::size_t n) {
        if (n > capacity) {
            std::free(data);
            capacity = round16(n);
            data = static_cast<float*>(std::aligned_alloc(64, capacity * sizeof(float)));
            if (!data) throw std::bad_alloc();
        }
        return data;
    }
};
thread_local Workspace workspace;

// dst (D, ld) = srcᵀ for src (T, D) of row stride `row`; columns [T, ld) zero.
// Row by row: each source row is read once, and the D destination rows fill up 16 floats per line.
// The source rows are 3C floats apart in packed qkv, too far for the hardware prefetcher: fetch
// a few rows ahead.
REMAT_VECTOR_CLONES
void pack_transposed(const float* src, std::size_t row, std::size_t T, std::size_t D, float* dst, std::size_t ld) {
    constexpr std::size_t ahead = 8;
    for (std::size_t t = 0; t < T; ++t) {
        const float* in = src + t * row;
        if (t + ahead < T)
            for (std::size_t d = 0; d < D; d += 16) __builtin_prefetch(in + ahead * row + d);
        for (std::size_t d = 0; d < D; ++d) dst[d * ld + t] = in[d];
    }
    for (std::size_t d = 0; d < D; ++d) std::fill(dst + d * ld + T, dst + (d + 1) * ld, 0.0f);
}

// factor[j] for j < n: keep_scale where ops::dropout keeps flat element first + j, else 0.
void dropout_factors(const Problem& pr, std::uint64_t first, std::size_t n, float* factor) {
    for (std::size_t j = 0; j < n;) {
        const std::uint64_t index = first + j;
        const auto bits = block_bits(pr.stream, index / 4);
        for (std::size_t lane = index % 4; lane < 4 && j < n; ++lane, ++j)
            factor[j] = dropout_keeps(bits[lane], pr.p) ? pr.keep_scale : 0.0f;
    }
}

// ---- Row kernels: softmax forward, its recomputation, its gradient -----------------------------
// The forward and the recomputation in backward run the same loops on the same scores, so the
// probabilities backward uses are the forward's, bit for bit.

// Padding keys of a row, and keys before its window, to -inf (their exp is exactly 0).
inline void mask_padding(float* s, std::size_t first, std::size_t visible, const float* keep) {
    if (keep)
        for (std::size_t k = 0; k < visible; ++k) s[k] = keep[k] != 0.0f ? s[k] : lowest;
    for (std::size_t k = 0; k < first; ++k) s[k] = lowest;
}

REMAT_VECTOR_CLONES
void exp_shifted(float* s, std::size_t n, float max) {
    for (std::size_t k = 0; k < n; ++k) s[k] = fast_exp(s[k] - max);
}

REMAT_VECTOR_CLONES
void scale_row(float* s, std::size_t n, float factor) {
    for (std::size_t k = 0; k < n; ++k) s[k] *= factor;
}

REMAT_VECTOR_CLONES
void multiply_rows(float* s, const float* factor, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) s[k] *= factor[k];
}

// A row whose visible keys are all padding, as softmax has it: HF's finfo.min masks leave the keys
// hidden by exactly one mask at min and those hidden by both at -inf, so the row is uniform over the
// former. Writes the row over all Tk keys (zeros up to `width`); returns the count.
// Combined masks (HF's masking_utils) leave every key of such a row at min: uniform over all Tk.
std::size_t uniform_row(float* s, std::size_t visible, std::size_t Tk, std::size_t width, const float* keep,
                        bool combined) {
    std::size_t count = 0;
    for (std::size_t k = 0; k < Tk; ++k) {
        const bool at_min = combined || k < visible || !keep || keep[k] != 0.0f;
        s[k] = at_min ? 1.0f : 0.0f;
        count += at_min;
    }
    for (std::size_t k = 0; k < Tk; ++k) s[k] /= static_cast<float>(count);
    if (width > Tk) std::fill(s + Tk, s + width, 0.0f);
    return count;
}

// Scores (rows, width) of queries i0 … into probabilities, in place; per row the stats (max, 1/Σ)
// — or (-inf, count) for a uniform row. Keys from each row's visible limit up to `width` become 0.
REMAT_VECTOR_CLONES
void softmax_block(const Problem& pr, const float* keep, const std::int64_t* starts, std::size_t i0, std::size_t rows,
                   float* S, std::size_t ld, std::size_t width, float* stats) {
    for (std::size_t r = 0; r < rows; ++r) {
        float* s = S + r * ld;
        const std::size_t visible = pr.visible(i0 + r);
        mask_padding(s, pr.first(i0 + r, starts), visible, keep);
        float max = fixed_order_max(visible, s);
        if (max == lowest) {
            if (pr.sees_nothing(keep, starts, i0 + r)) {
                stats[2 * r] = lowest;
                stats[2 * r + 1] = static_cast<float>(uniform_row(s, visible, pr.Tk, width, keep, pr.combined));
                continue;
            }
            // Scores all NaN or -inf (a diverged model): NaN probabilities, as softmax gives them; the
            // NaN max marks the row for recompute_block too.
            max = std::numeric_limits<float>::quiet_NaN();
        }
        exp_shifted(s, visible, max);
        const float inv = 1.0f / fixed_order_sum(visible, [&](std::size_t k) { return s[k]; });
        scale_row(s, visible, inv);
        std::fill(s + visible, s + width, 0.0f);
        stats[2 * r] = max;
        stats[2 * r + 1] = inv;
    }
}

// The forward's probabilities again, from the same scores and the kept stats.
REMAT_VECTOR_CLONES
void recompute_block(const Problem& pr, const float* keep, const std::int64_t* starts, std::size_t i0, std::size_t rows,
                     float* S, std::size_t ld, std::size_t width, const float* stats) {
    for (std::size_t r = 0; r < rows; ++r) {
        float* s = S + r * ld;
        const std::size_t visible = pr.visible(i0 + r);
        const float max = stats[2 * r];
        if (max == lowest) {
            uniform_row(s, visible, pr.Tk, width, keep, pr.combined);
            continue;
        }
        mask_padding(s, pr.first(i0 + r, starts), visible, keep);
        exp_shifted(s, visible, max);
        scale_row(s, visible, stats[2 * r + 1]);
        std::fill(s + visible, s + width, 0.0f);
    }
}

// dS = P ⊙ (dP − Δ) with Δ = dO·O per row (= Σ P ⊙ dP). A uniform row does not depend on the scores:
// 0 with two masks; with combined masks, what HF's autograd computes all the same (softmax's Jacobian
// at the uniform row: each score's finfo.min sum still has derivative 1). With dropout, dP is first
// multiplied by the row's factors.
REMAT_VECTOR_CLONES
float dot(const float* a, const float* b, std::size_t n) {
    return fixed_order_sum(n, [&](std::size_t i) { return a[i] * b[i]; });
}

REMAT_VECTOR_CLONES
void score_gradient_row(const float* p, float* ds, const float* factor, std::size_t width, float delta) {
    if (factor)
        for (std::size_t k = 0; k < width; ++k) ds[k] = p[k] * (ds[k] * factor[k] - delta);
    else
        for (std::size_t k = 0; k < width; ++k) ds[k] = p[k] * (ds[k] - delta);
}

// ---- One (batch, head) -------------------------------------------------------------------------

// Which keys a block of queries [i0, i0 + rows) may see: [0, end).
std::size_t key_end(const Problem& pr, bool full, std::size_t i0, std::size_t rows) {
    return full ? pr.Tk : std::min(pr.Tk, i0 + rows + pr.offset());
}

void forward_head(const Problem& pr, Heads<const float> q, Heads<const float> k, Heads<const float> v, float* out,
                  float* stats, std::size_t b, std::size_t h) {
    const std::size_t D = pr.D, ld = row_stride(pr.Tk);
    float* kt = workspace.get(D * ld + block_rows * ld + ld);
    float* S = kt + D * ld;
    float* factor = S + block_rows * ld;
    const float *Q = q.at(b, h, D), *K = k.at(b, h / pr.group, D), *V = v.at(b, h / pr.group, D);
    float* O = out + b * pr.Tq * pr.C + h * D;
    const float* keep = pr.keep ? pr.keep + b * pr.Tk : nullptr;
    const std::int64_t* starts = pr.starts ? pr.starts + b * pr.Tq : nullptr;
    const bool full = !pr.causal || pr.has_masked_rows(b);
    pack_transposed(K, k.row, pr.Tk, D, kt, ld);
    for (std::size_t i0 = 0; i0 < pr.Tq; i0 += block_rows) {
        const std::size_t rows = std::min(block_rows, pr.Tq - i0), end = key_end(pr, full, i0, rows);
        const std::size_t width = round16(end);
        product(rows, width, D, {Q + i0 * q.row, q.row, 1}, kt, ld, S, ld, pr.scale, false);  // (rows, width)
        float* st = stats + ((b * pr.H + h) * pr.Tq + i0) * 2;
        softmax_block(pr, keep, starts, i0, rows, S, ld, width, st);
        if (pr.dropout)
            for (std::size_t r = 0; r < rows; ++r) {
                dropout_factors(pr, ((b * pr.H + h) * pr.Tq + i0 + r) * pr.Tk, end, factor);
                multiply_rows(S + r * ld, factor, end);
            }
        product(rows, D, end, {S, ld, 1}, V, v.row, O + i0 * pr.C, pr.C, 1.0f, false);  // P·V: (rows, D)
    }
}

struct Gradients {
    Heads<float> dq, dk, dv;  // p null: not wanted
};

// Key/value head j of batch b: the query heads j·group … (j + 1)·group − 1 one after another, so
// that each dk, dv row is written by one task, in one order.
void backward_group(const Problem& pr, Heads<const float> q, Heads<const float> k, Heads<const float> v,
                    const float* out, const float* dout, const float* stats, const Gradients& g, std::size_t b,
                    std::size_t j) {
    const std::size_t D = pr.D, ld = row_stride(pr.Tk), C = pr.C;
    float* kt = workspace.get(2 * D * ld + 2 * block_rows * ld + ld);
    float* vt = kt + D * ld;
    float* P = vt + D * ld;
    float* dS = P + block_rows * ld;
    float* factor = dS + block_rows * ld;
    const float *K = k.at(b, j, D), *V = v.at(b, j, D);
    float* dK = g.dk.p ? g.dk.at(b, j, D) : nullptr;
    float* dV = g.dv.p ? g.dv.at(b, j, D) : nullptr;
    const float* keep = pr.keep ? pr.keep + b * pr.Tk : nullptr;
    const std::int64_t* starts = pr.starts ? pr.starts + b * pr.Tq : nullptr;
    const bool full = !pr.causal || pr.has_masked_rows(b);
    pack_transposed(K, k.row, pr.Tk, D, kt, ld);
    for (std::size_t h = j * pr.group; h < (j + 1) * pr.group; ++h) {
        const float* Q = q.at(b, h, D);
        const float* O = out + b * pr.Tq * C + h * D;
        const float* dO = dout + b * pr.Tq * C + h * D;
        float* dQ = g.dq.p ? g.dq.at(b, h, D) : nullptr;
        const bool scores_needed = dQ || dK;
        if (scores_needed && h == j * pr.group) pack_transposed(V, v.row, pr.Tk, D, vt, ld);
        for (std::size_t i0 = 0; i0 < pr.Tq; i0 += block_rows) {
            const std::size_t rows = std::min(block_rows, pr.Tq - i0), end = key_end(pr, full, i0, rows);
            const std::size_t width = round16(end);
            const float* st = stats + ((b * pr.H + h) * pr.Tq + i0) * 2;
            product(rows, width, D, {Q + i0 * q.row, q.row, 1}, kt, ld, P, ld, pr.scale, false);
            recompute_block(pr, keep, starts, i0, rows, P, ld, width, st);
            if (scores_needed)
                product(rows, width, D, {dO + i0 * C, C, 1}, vt, ld, dS, ld, 1.0f, false);  // dP = dO·vᵀ
            for (std::size_t r = 0; r < rows; ++r) {
                float* p = P + r * ld;
                if (pr.dropout) {
                    dropout_factors(pr, ((b * pr.H + h) * pr.Tq + i0 + r) * pr.Tk, end, factor);
                    std::fill(factor + end, factor + width, 0.0f);
                }
                if (scores_needed) {
                    float* ds = dS + r * ld;
                    if (st[2 * r] == lowest && !pr.combined) {
                        std::fill(ds, ds + width, 0.0f);
                    } else {
                        const float* o = O + (i0 + r) * C;
                        const float* d = dO + (i0 + r) * C;
                        const float delta = dot(d, o, D);
                        score_gradient_row(p, ds, pr.dropout ? factor : nullptr, width, delta);
                    }
                }
                if (pr.dropout) multiply_rows(p, factor, width);
            }
            if (dV) product(end, D, rows, {P, 1, ld}, dO + i0 * C, C, dV, g.dv.row, 1.0f, true);  // += Pᵀ·dO
            if (dQ) product(rows, D, end, {dS, ld, 1}, K, k.row, dQ + i0 * g.dq.row, g.dq.row, pr.scale, true);  // += dS·k/√D
            if (dK) product(end, D, rows, {dS, 1, ld}, Q + i0 * q.row, q.row, dK, g.dk.row, pr.scale, true);  // += dSᵀ·q/√D
        }
    }
}

// ---- The op ------------------------------------------------------------------------------------

std::string shapes(const Var& q, const Var& k, const Var& v) {
    return to_string(q.shape()) + ", " + to_string(k.shape()) + ", " + to_string(v.shape());
}

// C query features, C_kv key (and value) features: n_head query heads of D = C / n_head, C_kv / D
// key/value heads, each shared by n_head / (C_kv / D) query heads.
Problem make_problem(std::size_t B, std::size_t Tq, std::size_t Tk, std::size_t C, std::size_t C_kv,
                     std::size_t n_head, const SoftmaxMask& mask, const AttentionDropout& dropout,
                     const std::string& what) {
    if (n_head == 0 || C % n_head != 0 || C == 0)
        throw ShapeError("attention: " + std::to_string(C) + " features do not split into " + std::to_string(n_head) +
                         " heads (" + what + ")");
    const std::size_t D = C / n_head;
    if (C_kv == 0 || C_kv % D != 0 || n_head % (C_kv / D) != 0)
        throw ShapeError("attention: " + std::to_string(C_kv) + " key features are not a whole number of heads of " +
                         std::to_string(D) + " dividing the " + std::to_string(n_head) + " query heads (" + what + ")");
    check_window(mask, "attention");
    if (mask.causal && Tq > Tk)
        throw ShapeError("attention (causal): more queries than keys (" + what + ")");
    check_key_start(mask, B, Tq, Tk, "attention");
    if (mask.key_padding) {
        const Tensor& m = *mask.key_padding;
        if (m.dimension() != 2 || m.shape()[0] != B || m.shape()[1] != Tk)
            throw ShapeError("attention: key padding mask must be (batch, keys) = " + to_string(Shape{B, Tk}) +
                             ", got " + to_string(m.shape()));
    }
    if (!(dropout.p >= 0.0f && dropout.p <= 1.0f))
        throw ValueError("attention: dropout p must be in [0, 1], got " + std::to_string(dropout.p));
    Problem pr{};
    pr.B = B, pr.H = n_head, pr.Tq = Tq, pr.Tk = Tk, pr.C = C, pr.D = D;
    pr.group = n_head / (C_kv / D);
    pr.causal = mask.causal;
    pr.window = mask.window;
    pr.combined = mask.combined;
    pr.scale = 1.0f / std::sqrt(static_cast<float>(pr.D));
    pr.dropout = dropout.p > 0.0f && dropout.generator;
    if (pr.dropout) {
        pr.p = dropout.p;
        pr.keep_scale = dropout.p < 1.0f ? 1.0f / (1.0f - dropout.p) : 0.0f;
        pr.stream = dropout.generator->skip((B * n_head * Tq * Tk + 3) / 4);  // as ops::dropout on (B, H, Tq, Tk)
    }
    return pr;
}

Var run(const Problem& problem, const std::vector<Var>& inputs, Heads<const float> q, Heads<const float> k,
        Heads<const float> v, const SoftmaxMask& mask) {
    Problem pr = problem;
    std::shared_ptr<const Tensor> keep;  // copies: the caller's masks need not outlive the forward
    if (mask.key_padding) {
        keep = share(Tensor(*mask.key_padding));
        pr.keep = keep->data();
    }
    std::shared_ptr<const IdTensor> starts;
    if (mask.key_start) {
        starts = std::make_shared<const IdTensor>(*mask.key_start);
        pr.starts = starts->data();
    }
    const Shape out_shape{pr.B, pr.Tq, pr.C}, stats_shape{pr.B, pr.H, pr.Tq, 2};
    // Selective checkpointing may keep this op: its output, then the row stats its pullback needs.
    ad::Backend& backend = ad::current();
    std::shared_ptr<const Tensor> yv = backend.reuse(ad::OpKind::attention), saved_stats;
    if (yv) {
        check_shape("recomputation of a kept attention output", out_shape, yv->shape());
        saved_stats = backend.reuse(ad::OpKind::attention);
        if (!saved_stats) throw std::logic_error("recomputation of a kept attention output: its row stats were not kept");
        check_shape("recomputation of kept attention stats", stats_shape, saved_stats->shape());
    } else {
        Tensor y = empty(out_shape);         // (B, Tq, C)
        Tensor stats = empty(stats_shape);  // (B, H, Tq, 2): per row max and 1/Σ
        if (pr.Tk == 0) {
            std::fill(y.begin(), y.end(), 0.0f);  // an empty sum
        } else {
            parallel_for(pr.B * pr.H, [&](std::size_t task) {
                forward_head(pr, q, k, v, y.data(), stats.data(), task / pr.H, task % pr.H);
            });
        }
        yv = share(std::move(y));
        saved_stats = share(std::move(stats));
        backend.keep(ad::OpKind::attention, yv);
        backend.keep(ad::OpKind::attention, saved_stats);
    }
    bool record = false;
    for (const Var& x : inputs) record = record || x.requires_grad();
    if (!record || !backend.recording() || pr.Tk == 0) return Var(yv);
    std::vector<std::shared_ptr<const Tensor>> values;
    for (const Var& x : inputs) values.push_back(x.shared_value());  // keeps q, k, v alive
    const bool packed = inputs.size() == 1;
    return ad::record(
        ad::OpKind::attention, yv, inputs,
        [pr, q, k, v, yv, saved_stats, values, keep, starts, packed](const Tensor& dy, ad::Grads& g) {
            Gradients grads{};
            if (packed) {
                float* d = g[0].data();
                grads = {{d, q.row, q.batch}, {d + pr.C, k.row, k.batch}, {d + 2 * pr.C, v.row, v.batch}};
            } else {
                if (g.wants(0)) grads.dq = {g[0].data(), q.row, q.batch};
                if (g.wants(1)) grads.dk = {g[1].data(), k.row, k.batch};
                if (g.wants(2)) grads.dv = {g[2].data(), v.row, v.batch};
            }
            const std::size_t kv_heads = pr.H / pr.group;
            parallel_for(pr.B * kv_heads, [&](std::size_t task) {
                backward_group(pr, q, k, v, yv->data(), dy.data(), saved_stats->data(), grads, task / kv_heads,
                               task % kv_heads);
            });
        });
}

}  // namespace

Var attention(const Var& q, const Var& k, const Var& v, std::size_t n_head, const SoftmaxMask& mask,
              const AttentionDropout& dropout) {
    const std::string what = "q, k, v " + shapes(q, k, v);
    if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3 || k.shape() != v.shape() || q.shape()[0] != k.shape()[0])
        throw ShapeError("attention: expected q (B, Tq, C), k and v (B, Tk, C_kv), got " + shapes(q, k, v));
    const std::size_t B = q.shape()[0], Tq = q.shape()[1], Tk = k.shape()[1], C = q.shape()[2], Ckv = k.shape()[2];
    const Problem pr = make_problem(B, Tq, Tk, C, Ckv, n_head, mask, dropout, what);
    return run(pr, {q, k, v}, {q.value().data(), C, Tq * C}, {k.value().data(), Ckv, Tk * Ckv},
               {v.value().data(), Ckv, Tk * Ckv}, mask);
}

Var attention(const Var& qkv, std::size_t n_head, const SoftmaxMask& mask, const AttentionDropout& dropout) {
    if (qkv.dim() != 3 || qkv.shape()[2] % 3 != 0)
        throw ShapeError("attention: expected q, k, v packed as (B, T, 3C), got " + to_string(qkv.shape()));
    const std::size_t B = qkv.shape()[0], T = qkv.shape()[1], C = qkv.shape()[2] / 3;
    const Problem pr = make_problem(B, T, T, C, C, n_head, mask, dropout, "qkv " + to_string(qkv.shape()));
    const float* base = qkv.value().data();
    const std::size_t step = qkv.value().size() == 0 ? 0 : C;  // an empty tensor's data may be null: no offset from it
    return run(pr, {qkv}, {base, 3 * C, 3 * T * C}, {base + step, 3 * C, 3 * T * C}, {base + 2 * step, 3 * C, 3 * T * C},
               mask);
}

}  // namespace remat::ops
