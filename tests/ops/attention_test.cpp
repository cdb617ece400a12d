// The fused attention op against the same attention composed of the unfused ops (split, permute,
// matmul, scale, softmax, dropout, matmul, permute) at sizes the finite-difference table cannot
// afford: several query blocks, D = 32 and 64, padding, dropout — outputs and every gradient.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "remat/ad/tape.hpp"
#include "remat/core/error.hpp"
#include "remat/ops.hpp"

using namespace remat;

namespace {
Tensor randn(const Shape& shape, std::uint64_t seed, float scale = 1.0f) {
    Tensor t = empty(shape);
    Generator(seed).fill_normal(t.data(), t.size(), 0.0f, scale);
    return t;
}

// softmax(q·kᵀ/√D, mask) (dropped out) · v per head, from the unfused ops.
Var composed(const Var& q, const Var& k, const Var& v, std::size_t H, const ops::SoftmaxMask& mask, float p,
             std::uint64_t seed) {
    const auto B = static_cast<std::int64_t>(q.shape()[0]), Tq = static_cast<std::int64_t>(q.shape()[1]);
    const auto Tk = static_cast<std::int64_t>(k.shape()[1]), C = static_cast<std::int64_t>(q.shape()[2]);
    const auto h = static_cast<std::int64_t>(H), D = C / h;
    auto heads = [&](const Var& x, std::int64_t T) { return ops::permute(ops::reshape(x, {B, T, h, D}), {0, 2, 1, 3}); };
    Var s = ops::scale(ops::matmul(heads(q, Tq), heads(k, Tk), false, true), 1.0f / std::sqrt(static_cast<float>(D)));
    Var a = ops::softmax(s, mask);
    Generator g(seed);
    if (p > 0) a = ops::dropout(a, p, g);
    return ops::reshape(ops::permute(ops::matmul(a, heads(v, Tk)), {0, 2, 1, 3}), {B, Tq, C});
}

double worst_relative(const Tensor& got, const Tensor& want) {
    REQUIRE(got.shape() == want.shape());
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(got.data()[i]) - want.data()[i]));
        scale = std::max(scale, std::abs(static_cast<double>(want.data()[i])));
    }
    return worst / std::max(scale, 1e-6);
}

struct Case {
    const char* name;
    std::size_t B, Tq, Tk, C, H;
    bool causal, padded, packed;
    float p;
    std::size_t kv_heads = 0;  // 0: H (no grouping)
    std::size_t window = 0;    // with combined masks (the Llama family's)
    bool sequences = false;    // several sequences packed into each row (SoftmaxMask::key_start)
};

// Packed sequences of uneven lengths: row b is cut every 37 + 11·b positions.
IdTensor key_starts(std::size_t B, std::size_t T) {
    IdTensor s = IdTensor::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t) s(b, t) = static_cast<std::int64_t>(t - t % (37 + 11 * b));
    return s;
}

// k (B, T, Hkv·D) with each kv head repeated for its H / Hkv query heads: HF's repeat_kv.
Var repeat_kv(const Var& k, std::size_t H, std::size_t D) {
    const std::size_t kv_heads = k.shape()[2] / D;
    std::vector<Var> heads;
    for (std::size_t h = 0; h < H; ++h) {
        const std::size_t j = h / (H / kv_heads);
        heads.push_back(ops::slice_last(k, j * D, (j + 1) * D));
    }
    return ops::concat_last(heads);
}

void check(const Case& c) {
    CAPTURE(c.name);
    const std::size_t D = c.C / c.H, kv_width = (c.kv_heads ? c.kv_heads : c.H) * D;
    Tensor q = randn({c.B, c.Tq, c.C}, 1, 0.7f), k = randn({c.B, c.Tk, kv_width}, 2, 0.7f),
           v = randn({c.B, c.Tk, kv_width}, 3);
    Tensor padding = full(Shape{c.B, c.Tk}, 1.0f);
    if (c.padded) {
        for (std::size_t j = c.Tk - c.Tk / 3; j < c.Tk; ++j) padding(0, j) = 0.0f;  // right padding
        if (c.B > 1)
            for (std::size_t j = 0; j < 5; ++j) padding(1, j) = 0.0f;  // left padding: rows at the start see only padding
    }
    const bool combined = c.kv_heads || c.window;
    const IdTensor starts = key_starts(c.B, c.Tq);
    const ops::SoftmaxMask mask{.causal = c.causal, .key_padding = c.padded ? &padding : nullptr, .window = c.window,
                                .combined = combined, .key_start = c.sequences ? &starts : nullptr};
    Tensor weights = randn({c.B, c.Tq, c.C}, 4);
    // Rows that see only padding are uniform whatever the scores: with two masks the fused op sends no
    // gradient from them into q and k, the composed softmax sends its Jacobian's (HF's autograd
    // artifact). Compare the rest; "uniform rows" below checks those rows. With combined masks both
    // send the Jacobian's, as HF's Llama does: compare everything.
    if (c.padded && c.causal && c.B > 1 && !combined)
        for (std::size_t i = 0; i + 1 + (c.Tk - c.Tq) <= 5 && i < c.Tq; ++i)
            for (std::size_t f = 0; f < c.C; ++f) weights(1, i, f) = 0.0f;
    std::vector<Tensor*> wrt{&q, &k, &v};
    auto loss = [&](bool fused, Tensor* out) {
        return [&, fused, out] {
            Var qv = ad::leaf(q), kv = ad::leaf(k), vv = ad::leaf(v), y;
            if (!fused) {
                y = composed(qv, repeat_kv(kv, c.H, D), repeat_kv(vv, c.H, D), c.H, mask, c.p, 9);
            } else if (c.packed) {
                Generator g(9);
                y = ops::attention(ops::concat_last({qv, kv, vv}), c.H, mask, {c.p, &g});
            } else {
                Generator g(9);
                y = ops::attention(qv, kv, vv, c.H, mask, {c.p, &g});
            }
            *out = y.value();
            return ops::sum(ops::mul(y, Var(weights)));
        };
    };
    Tensor y_fused, y_composed;
    const auto fused = ad::gradient(loss(true, &y_fused), wrt);
    const auto reference = ad::gradient(loss(false, &y_composed), wrt);
    CHECK(worst_relative(y_fused, y_composed) < 2e-6);
    for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(worst_relative(fused.grads[i], reference.grads[i]) < 2e-5);
    }
}
}  // namespace

TEST_CASE("fused attention equals the composed ops") {
    const Case cases[] = {
        {"GPT-2-like: packed, causal, D = 32, five blocks of 32 queries", 2, 150, 150, 128, 4, true, false, true, 0.0f},
        {"packed, causal, D = 64", 1, 130, 130, 128, 2, true, false, true, 0.0f},
        {"causal + padding: rows that see only padding", 2, 70, 70, 64, 2, true, true, true, 0.0f},
        {"BERT-like: q, k, v, padding, D = 32", 2, 80, 80, 64, 2, false, true, false, 0.0f},
        {"q, k, v, causal, fewer queries than keys", 2, 40, 100, 96, 3, true, false, false, 0.0f},
        {"packed, causal, dropout 0.25", 2, 90, 90, 64, 2, true, false, true, 0.25f},
        {"q, k, v, padding, dropout 0.1, D = 20", 2, 33, 33, 40, 2, false, true, false, 0.1f},
        {"grouped: 4 query heads on 2 kv heads, causal + padding, D = 32", 2, 100, 100, 128, 4, true, true, false, 0.0f, 2},
        {"one kv head (MQA), causal, dropout 0.2, D = 16", 2, 70, 70, 64, 4, true, false, false, 0.2f, 1},
        {"grouped, sliding window 40 (shorter than the sequence), padding", 2, 100, 100, 96, 6, true, true, false, 0.0f, 3, 40},
        {"packed, sliding window 7, causal", 1, 50, 50, 64, 2, true, false, true, 0.0f, 0, 7},
        {"packed qkv, packed sequences, D = 32", 2, 150, 150, 128, 4, true, false, true, 0.0f, 0, 0, true},
        {"grouped, packed sequences, window 20, dropout 0.1", 2, 100, 100, 96, 6, true, false, false, 0.1f, 3, 20, true},
    };
    for (const Case& c : cases) check(c);
}

TEST_CASE("fused attention: each packed sequence comes out as if it were alone") {
    // One row holding sequences of 45, 70 and 35 positions against each run by itself.
    const std::size_t lengths[] = {45, 70, 35}, T = 150, C = 64, H = 2;
    const Tensor qkv = randn({1, T, 3 * C}, 21);
    IdTensor starts = IdTensor::from_shape({1, T});
    std::size_t at = 0;
    for (const std::size_t n : lengths) {
        for (std::size_t t = at; t < at + n; ++t) starts(0, t) = static_cast<std::int64_t>(at);
        at += n;
    }
    ad::NoGrad no_grad;
    const Tensor packed = ops::attention(Var(qkv), H, {.causal = true, .key_start = &starts}).value();
    at = 0;
    for (const std::size_t n : lengths) {
        CAPTURE(at);
        Tensor alone_in = empty(Shape{1, n, 3 * C});
        std::copy_n(qkv.data() + at * 3 * C, n * 3 * C, alone_in.data());
        const Tensor alone = ops::attention(Var(alone_in), H, {.causal = true}).value();
        Tensor part = empty(Shape{1, n, C});
        std::copy_n(packed.data() + at * C, n * C, part.data());
        CHECK(worst_relative(part, alone) < 1e-6);
        at += n;
    }
}

TEST_CASE("fused attention: rows that see only padding") {
    // Batch 0, query 0 sees key 0 alone, which is padding: HF's masks make that row uniform over the
    // keys not hidden by both masks (0, 2, 3); its output is their mean, and the scores do not matter.
    Tensor qkv = randn({1, 4, 12}, 7);
    Tensor padding{{0.0f, 1.0f, 1.0f, 1.0f}};
    padding(0, 1) = 0.0f;  // key 1: padding and causally hidden from query 0, at -inf
    Tensor weights = zeros(Shape{1, 4, 4});
    for (std::size_t f = 0; f < 4; ++f) weights(0, 0, f) = 1.0f + static_cast<float>(f);  // only query 0 counts
    std::vector<Tensor*> wrt{&qkv};
    Tensor out;
    auto g = ad::gradient(
        [&] {
            Var y = ops::attention(ad::leaf(qkv), 2, {.causal = true, .key_padding = &padding});
            out = y.value();
            return ops::sum(ops::mul(y, Var(weights)));
        },
        wrt);
    for (std::size_t f = 0; f < 4; ++f) {
        const float mean = (qkv(0, 0, 8 + f) + qkv(0, 2, 8 + f) + qkv(0, 3, 8 + f)) / 3.0f;
        CHECK(out(0, 0, f) == doctest::Approx(mean).epsilon(1e-6));
    }
    const Tensor& d = g.grads[0];
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t f = 0; f < 8; ++f) CHECK(d(0, t, f) == 0.0f);  // q and k
    for (std::size_t f = 0; f < 4; ++f) {
        CHECK(d(0, 0, 8 + f) == doctest::Approx((1.0f + static_cast<float>(f)) / 3.0f));  // v: 1/3 of dy each
        CHECK(d(0, 1, 8 + f) == 0.0f);
    }
}

TEST_CASE("fused attention: NaN scores (a diverged model) give NaN, never a crash") {
    // Before: a causal row whose scores were all NaN was taken for a row of padding, and its
    // "uniform" fill ran past the block (a segfault in remat train at lr 1e30).
    for (const bool padded : {false, true}) {
        CAPTURE(padded);
        Tensor qkv = randn({2, 70, 24}, 3);
        qkv(0, 5, 0) = std::numeric_limits<float>::quiet_NaN();  // query 5 of batch 0: NaN scores
        for (std::size_t t = 0; t < 70; ++t) qkv(1, t, 12) = std::numeric_limits<float>::infinity();  // keys of batch 1
        Tensor padding = zeros(Shape{2, 70}) + 1.0f;
        padding(0, 69) = 0.0f;
        std::vector<Tensor*> wrt{&qkv};
        Tensor out;
        auto g = ad::gradient(
            [&] {
                Var y = ops::attention(ad::leaf(qkv), 2, {.causal = true, .key_padding = padded ? &padding : nullptr});
                out = y.value();
                return ops::sum(y);
            },
            wrt);
        CHECK(std::isnan(out(0, 5, 0)));
        CHECK(std::isfinite(out(0, 4, 0)));  // the rows before it are untouched
        CHECK(std::isnan(out(1, 3, 4)));  // head 1, whose keys hold +inf
    }
}

TEST_CASE("fused attention: generator advance, errors, empty inputs") {
    ad::NoGrad no_grad;
    SUBCASE("the generator advances as ops::dropout on (B, H, Tq, Tk) does") {
        Generator a(3), b(3);
        (void)ops::attention(Var(randn({2, 5, 24}, 1)), 2, {.causal = true}, {0.5f, &a});
        (void)ops::dropout(Var(zeros(Shape{2, 2, 5, 5})), 0.5f, b);
        CHECK(a.state() == b.state());
    }
    SUBCASE("errors name the shapes") {
        CHECK_THROWS_WITH_AS(ops::attention(Var(zeros(Shape{2, 5, 10})), 2), "attention: expected q, k, v packed as (B, T, 3C), got (2, 5, 10)",
                             ShapeError);
        CHECK_THROWS_AS(ops::attention(Var(zeros(Shape{2, 5, 12})), 3), ShapeError);
        CHECK_THROWS_AS(ops::attention(Var(zeros(Shape{2, 5, 8})), Var(zeros(Shape{2, 3, 8})), Var(zeros(Shape{2, 3, 8})), 2,
                                       {.causal = true}),
                        ShapeError);
        Tensor bad_mask = full(Shape{2, 4}, 1.0f);
        CHECK_THROWS_AS(ops::attention(Var(zeros(Shape{2, 5, 12})), 2, {.key_padding = &bad_mask}), ShapeError);
        IdTensor starts = IdTensor::from_shape({2, 5});
        std::fill(starts.begin(), starts.end(), 0);
        CHECK_THROWS_WITH_AS(ops::attention(Var(zeros(Shape{2, 5, 12})), 2, {.key_start = &starts}),
                             "attention: key starts (packed sequences) need the causal mask", ShapeError);
        starts(1, 2) = 3;  // past its query
        CHECK_THROWS_WITH_AS(ops::attention(Var(zeros(Shape{2, 5, 12})), 2, {.causal = true, .key_start = &starts}),
                             "attention: key start 3 of query 2 in batch element 1 is not one of the keys it sees", ShapeError);
        IdTensor short_starts = IdTensor::from_shape({2, 4});
        std::fill(short_starts.begin(), short_starts.end(), 0);
        CHECK_THROWS_WITH_AS(ops::attention(Var(zeros(Shape{2, 5, 12})), 2, {.causal = true, .key_start = &short_starts}),
                             "attention: key starts must be (batch, queries) = (2, 5), got (2, 4)", ShapeError);
    }
    SUBCASE("no keys: zeros; no queries: empty") {
        const Var y = ops::attention(Var(randn({2, 3, 8}, 1)), Var(zeros(Shape{2, 0, 8})), Var(zeros(Shape{2, 0, 8})), 2);
        CHECK(y.shape() == Shape{2, 3, 8});
        CHECK(std::all_of(y.value().begin(), y.value().end(), [](float x) { return x == 0.0f; }));
        CHECK(ops::attention(Var(zeros(Shape{2, 0, 12})), 2).shape() == Shape{2, 0, 4});
    }
}

TEST_CASE("fused attention gives the same bits on 1 and 2 threads") {
    const std::size_t threads = ops::num_threads();
    Tensor qkv = randn({3, 200, 3 * 64}, 5);
    Tensor weights = randn({3, 200, 64}, 6);
    std::vector<Tensor*> wrt{&qkv};
    auto run = [&] {
        Tensor out;
        auto g = ad::gradient(
            [&] {
                Var y = ops::attention(ad::leaf(qkv), 2, {.causal = true});
                out = y.value();
                return ops::sum(ops::mul(y, Var(weights)));
            },
            wrt);
        g.grads.push_back(std::move(out));
        return g.grads;
    };
    ops::set_num_threads(1);
    const auto one = run();
    ops::set_num_threads(2);
    const auto two = run();
    ops::set_num_threads(threads);
    for (std::size_t i = 0; i < one.size(); ++i)
        CHECK(std::memcmp(one[i].data(), two[i].data(), one[i].size() * sizeof(float)) == 0);
}
