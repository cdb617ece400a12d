#pragma once
// The table of every differentiable op: each case names the op, the shapes of its inputs, and how
// to call it. The gradient and determinism tests run over this one list, so a new op is tested by
// adding a line here.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "remat/core/random.hpp"
#include "remat/ops.hpp"

namespace remat::test {

struct OpCase {
    std::string name;
    std::vector<Shape> inputs;
    std::function<Var(const std::vector<Var>&)> call;
    // Keep inputs at least this far from 0 (ops with a kink there, such as ReLU).
    float away_from_zero = 0.0f;
    // Take |x| after that (ops defined for positive inputs: log, sqrt).
    bool positive = false;
    // Then spread the inputs so that any two elements, across all inputs, are at least this far apart
    // (ops with a kink where two values tie: maximum, max over an axis) ...
    float min_gap = 0.0f;
    // ... and at least min_gap from each of these points (clamp's bounds).
    std::vector<float> kinks = {};
};

inline IdTensor ids(std::initializer_list<std::int64_t> values, std::vector<std::size_t> shape) {
    IdTensor t = IdTensor::from_shape(shape);
    std::copy(values.begin(), values.end(), t.begin());
    return t;
}

// cos and sin (3, 4) of rotary embeddings at positions 0, 1, 2 for the frequencies 1 and 0.1.
inline Tensor rotary_table(double (*f)(double)) {
    Tensor t = empty(Shape{3, 4});
    const double inv_freq[] = {1.0, 0.1};
    for (std::size_t p = 0; p < 3; ++p)
        for (std::size_t j = 0; j < 4; ++j) t(p, j) = static_cast<float>(f(static_cast<double>(p) * inv_freq[j % 2]));
    return t;
}
inline const Tensor& rotary_cos() {
    static const Tensor t = rotary_table([](double x) { return std::cos(x); });
    return t;
}
inline const Tensor& rotary_sin() {
    static const Tensor t = rotary_table([](double x) { return std::sin(x); });
    return t;
}

// cos or sin (2, 3, 4) for per-sequence positions {3, 4, 5} and {1, 1, 0} (a left-padded generation batch).
inline Tensor rotary_rows(double (*f)(double)) {
    Tensor t = zeros(Shape{2, 3, 4});
    const double inv_freq[] = {1.0, 0.1}, positions[6] = {3, 4, 5, 1, 1, 0};
    for (std::size_t r = 0; r < 6; ++r)
        for (std::size_t j = 0; j < 4; ++j) t.data()[r * 4 + j] = static_cast<float>(f(positions[r] * inv_freq[j % 2]));
    return t;
}

inline std::vector<OpCase> op_cases() {
    using namespace remat::ops;
    using V = std::vector<Var>;
    static const Tensor padding = [] {
        Tensor m = full(Shape{2, 5}, 1.0f);
        m(0, 3) = m(0, 4) = 0.0f;
        m(1, 0) = 0.0f;
        return m;
    }();
    static const Tensor right_padding = [] {  // every query sees a key that is not padding
        Tensor m = full(Shape{2, 5}, 1.0f);
        m(0, 3) = m(0, 4) = 0.0f;
        return m;
    }();
    static const IdTensor key_start = [] {  // packed sequences: row 0 [0, 2) [2, 5); row 1 [0, 1) [1, 4) [4, 5)
        IdTensor s = IdTensor::from_shape({2, 5});
        const std::int64_t starts[] = {0, 0, 2, 2, 2, 0, 1, 1, 1, 4};
        std::copy(std::begin(starts), std::end(starts), s.data());
        return s;
    }();
    static const Tensor condition = [] {  // 1/0, and values where only ≠ 0 counts
        Tensor c = zeros(Shape{3, 4});
        c(0, 0) = c(0, 3) = c(1, 1) = 1.0f;
        c(2, 2) = -2.0f;
        c(2, 0) = 0.5f;
        return c;
    }();
    static const Tensor row_condition = [] {
        Tensor c = full(Shape{1, 4}, 1.0f);
        c(0, 1) = c(0, 2) = 0.0f;
        return c;
    }();
    return {
        {"matmul (M,K)·(K,N)", {{3, 4}, {4, 5}}, [](const V& x) { return matmul(x[0], x[1]); }},
        {"matmul (B,T,K)·(K,N)", {{2, 3, 4}, {4, 5}}, [](const V& x) { return matmul(x[0], x[1]); }},
        {"matmul aᵀ·b", {{4, 3}, {4, 5}}, [](const V& x) { return matmul(x[0], x[1], true, false); }},
        {"matmul a·bᵀ", {{3, 4}, {5, 4}}, [](const V& x) { return matmul(x[0], x[1], false, true); }},
        {"matmul aᵀ·bᵀ", {{4, 3}, {5, 4}}, [](const V& x) { return matmul(x[0], x[1], true, true); }},
        {"matmul batched (B,H,T,D)·(B,H,D,T)ᵀ", {{2, 2, 3, 4}, {2, 2, 5, 4}},
         [](const V& x) { return matmul(x[0], x[1], false, true); }},
        {"matmul batched aᵀ", {{2, 4, 3}, {2, 4, 5}}, [](const V& x) { return matmul(x[0], x[1], true, false); }},
        {"linear in_out + bias", {{2, 3, 4}, {4, 5}, {5}},
         [](const V& x) { return linear(x[0], x[1], x[2], WeightLayout::in_out); }},
        {"linear out_in + bias", {{2, 3, 4}, {5, 4}, {5}},
         [](const V& x) { return linear(x[0], x[1], x[2], WeightLayout::out_in); }},
        {"linear out_in, no bias", {{3, 4}, {5, 4}},
         [](const V& x) { return linear(x[0], x[1], Var(), WeightLayout::out_in); }},
        {"linear out_in + low-rank term", {{2, 3, 4}, {5, 4}, {2, 3, 2}, {5, 2}},
         [](const V& x) { return linear(x[0], x[1], Var(), WeightLayout::out_in, {x[2], x[3]}); }},
        {"linear in_out + bias + low-rank term", {{3, 4}, {4, 5}, {5}, {3, 3}, {5, 3}},
         [](const V& x) { return linear(x[0], x[1], x[2], WeightLayout::in_out, {x[3], x[4]}); }},
        {"dropout_linear, no dropout, scale 2", {{2, 3, 5}, {2, 5}},
         [](const V& x) { return dropout_linear(x[0], x[1], 2.0f); }},
        // The same mask at every call: a generator made afresh (tests/ops/dropout_linear_test.cpp: tiles).
        {"dropout_linear, p=0.3, scale 0.5", {{2, 3, 10}, {3, 10}},
         [](const V& x) {
             Generator g(11);
             return dropout_linear(x[0], x[1], 0.5f, 0.3f, &g);
         }},
        {"add same shape", {{2, 3}, {2, 3}}, [](const V& x) { return add(x[0], x[1]); }},
        {"add bias row", {{2, 3, 4}, {4}}, [](const V& x) { return add(x[0], x[1]); }},
        {"sub broadcast both ways", {{2, 1, 4}, {1, 3, 1}}, [](const V& x) { return sub(x[0], x[1]); }},
        {"mul broadcast both ways", {{2, 1, 4}, {1, 3, 1}}, [](const V& x) { return mul(x[0], x[1]); }},
        {"mul by a one-element tensor", {{2, 3}, {1}}, [](const V& x) { return mul(x[0], x[1]); }},
        {"mul of a value with itself", {{2, 3}}, [](const V& x) { return mul(x[0], x[0]); }},
        {"scale", {{2, 3}}, [](const V& x) { return scale(x[0], -1.5f); }},
        {"div same shape (operator/)", {{2, 3}, {2, 3}}, [](const V& x) { return x[0] / x[1]; }, 0.5f},
        {"div broadcast both ways", {{2, 1, 4}, {1, 3, 1}}, [](const V& x) { return div(x[0], x[1]); }, 0.5f},
        {"div of a value by itself", {{2, 3}}, [](const V& x) { return div(x[0], x[0]); }, 0.5f},
        {"maximum same shape", {{3, 4}, {3, 4}}, [](const V& x) { return maximum(x[0], x[1]); }, 0.0f, false, 0.05f},
        {"maximum broadcast both ways", {{2, 1, 4}, {1, 3, 1}}, [](const V& x) { return maximum(x[0], x[1]); }, 0.0f,
         false, 0.05f},
        {"minimum bias row", {{2, 3, 4}, {4}}, [](const V& x) { return minimum(x[0], x[1]); }, 0.0f, false, 0.05f},
        {"where same shape", {{3, 4}, {3, 4}}, [](const V& x) { return where(Var(condition), x[0], x[1]); }},
        {"where, condition (1, 4), a (3, 1), b (3, 4)", {{3, 1}, {3, 4}},
         [](const V& x) { return where(Var(row_condition), x[0], x[1]); }},
        {"gelu_tanh", {{3, 7}}, [](const V& x) { return gelu_tanh(x[0]); }},
        {"gelu_erf", {{3, 7}}, [](const V& x) { return gelu_erf(x[0]); }},
        {"relu", {{3, 7}}, [](const V& x) { return relu(x[0]); }, 0.1f},
        {"tanh", {{3, 7}}, [](const V& x) { return ops::tanh(x[0]); }},
        {"sigmoid", {{3, 7}}, [](const V& x) { return sigmoid(x[0]); }},
        {"silu", {{3, 7}}, [](const V& x) { return silu(x[0]); }},
        {"silu_mul", {{3, 7}, {3, 7}}, [](const V& x) { return silu_mul(x[0], x[1]); }},
        {"exp", {{3, 7}}, [](const V& x) { return ops::exp(x[0]); }},
        {"log", {{3, 7}}, [](const V& x) { return ops::log(x[0]); }, 0.5f, true},
        {"sqrt", {{3, 7}}, [](const V& x) { return ops::sqrt(x[0]); }, 0.5f, true},
        {"clamp", {{3, 7}}, [](const V& x) { return clamp(x[0], -0.5f, 0.8f); }, 0.0f, false, 0.05f, {-0.5f, 0.8f}},
        {"clamp, upper bound only", {{3, 7}}, [](const V& x) { return clamp(x[0], -INFINITY, 0.3f); }, 0.0f, false,
         0.05f, {0.3f}},
        {"softmax", {{3, 6}}, [](const V& x) { return softmax(x[0]); }},
        {"softmax causal", {{2, 4, 4}}, [](const V& x) { return softmax(x[0], {.causal = true}); }},
        {"softmax causal, fewer queries than keys", {{2, 3, 5}}, [](const V& x) { return softmax(x[0], {.causal = true}); }},
        {"softmax key padding (B,H,Tq,Tk)", {{2, 2, 3, 5}},
         [](const V& x) { return softmax(x[0], {.key_padding = &padding}); }},
        {"attention packed qkv, causal (D = 2)", {{2, 5, 12}},
         [](const V& x) { return attention(x[0], 2, {.causal = true}); }},
        {"attention packed qkv, key padding", {{2, 5, 12}},
         [](const V& x) { return attention(x[0], 2, {.key_padding = &padding}); }},
        // Batch 1, query 0 sees only key 0, which is padding: a uniform row (no gradient to q, k).
        {"attention packed qkv, causal + key padding", {{2, 5, 12}},
         [](const V& x) { return attention(x[0], 2, {.causal = true, .key_padding = &padding}); }},
        {"attention q, k, v, causal, fewer queries than keys", {{2, 3, 8}, {2, 5, 8}, {2, 5, 8}},
         [](const V& x) { return attention(x[0], x[1], x[2], 2, {.causal = true}); }},
        {"attention q, k, v, key padding, dropout p=0.3", {{2, 4, 8}, {2, 5, 8}, {2, 5, 8}},
         [](const V& x) {
             Generator g(11);  // the same mask on every evaluation
             return attention(x[0], x[1], x[2], 2, {.key_padding = &padding}, {0.3f, &g});
         }},
        {"attention, grouped kv heads (4 query heads, 2 kv heads, D = 2), causal + padding",
         {{2, 5, 8}, {2, 5, 4}, {2, 5, 4}},
         [](const V& x) {
             return attention(x[0], x[1], x[2], 4, {.causal = true, .key_padding = &right_padding, .combined = true});
         }},
        {"attention, one kv head (MQA), sliding window 2", {{2, 5, 6}, {2, 5, 2}, {2, 5, 2}},
         [](const V& x) { return attention(x[0], x[1], x[2], 3, {.causal = true, .window = 2, .combined = true}); }},
        {"attention packed qkv, causal + padding + window 3, combined", {{2, 5, 12}},
         [](const V& x) {
             return attention(x[0], 2, {.causal = true, .key_padding = &right_padding, .window = 3, .combined = true});
         }},
        {"softmax causal, window 3, padding, combined (B,H,Tq,Tk)", {{2, 2, 5, 5}},
         [](const V& x) {
             return softmax(x[0], {.causal = true, .key_padding = &right_padding, .window = 3, .combined = true});
         }},
        {"attention packed qkv, causal + packed sequences", {{2, 5, 12}},
         [](const V& x) { return attention(x[0], 2, {.causal = true, .key_start = &key_start}); }},
        // Every row keeps a key that is not padding (with window 2, row 0's query 4 would see only padding).
        {"attention, grouped kv heads, packed sequences + padding + window 3, combined", {{2, 5, 8}, {2, 5, 4}, {2, 5, 4}},
         [](const V& x) {
             return attention(x[0], x[1], x[2], 4,
                              {.causal = true, .key_padding = &right_padding, .window = 3, .combined = true, .key_start = &key_start});
         }},
        {"softmax causal, packed sequences (B,H,Tq,Tk)", {{2, 2, 5, 5}},
         [](const V& x) { return softmax(x[0], {.causal = true, .key_start = &key_start}); }},
        // D = 16 and 32: the vector tiles (several query blocks: tests/ops/attention_test.cpp).
        {"attention packed qkv, causal, D = 16", {{2, 7, 48}}, [](const V& x) { return attention(x[0], 1, {.causal = true}); }},
        {"attention packed qkv, D = 32", {{1, 5, 96}}, [](const V& x) { return attention(x[0], 1); }},
        {"layer_norm", {{2, 3, 6}, {6}, {6}}, [](const V& x) { return layer_norm(x[0], x[1], x[2], 1e-5f); }},
        {"rms_norm", {{2, 3, 6}, {6}}, [](const V& x) { return rms_norm(x[0], x[1], 1e-6f); }},
        {"rotary, 2 heads of 4", {{2, 3, 8}},
         [](const V& x) { return rotary(x[0], rotary_cos(), rotary_sin()); }},
        {"rotary, each sequence its own positions", {{2, 3, 8}},
         [](const V& x) {
             static const Tensor c = rotary_rows([](double v) { return std::cos(v); }), s = rotary_rows([](double v) { return std::sin(v); });
             return rotary(x[0], c, s);
         }},
        {"batch_norm (training)", {{5, 3}, {3}, {3}}, [](const V& x) { return batch_norm(x[0], x[1], x[2], 1e-5f); }},
        {"embedding, repeated ids", {{5, 3}},
         [](const V& x) { return embedding(x[0], ids({4, 0, 4, 2, 4, 1}, {2, 3})); }},
        {"dropout p=0.3", {{4, 9}},
         [](const V& x) {
             Generator g(11);  // the same mask on every evaluation
             return dropout(x[0], 0.3f, g);
         }},
        {"reshape with -1", {{2, 3, 4}}, [](const V& x) { return reshape(x[0], {4, -1}); }},
        {"permute", {{2, 3, 4}}, [](const V& x) { return permute(x[0], {2, 0, 1}); }},
        {"transpose", {{2, 3, 4}}, [](const V& x) { return transpose(x[0], 0, 2); }},
        {"slice_last", {{2, 3, 6}}, [](const V& x) { return slice_last(x[0], 1, 4); }},
        {"split_last", {{2, 9}},
         [](const V& x) {
             auto parts = split_last(x[0], {3, 3, 3});
             return mul(add(parts[0], parts[1]), parts[2]);
         }},
        {"concat_last", {{2, 3}, {2, 2}, {2, 1}}, [](const V& x) { return concat_last({x[0], x[1], x[2], x[0]}); }},
        {"sum", {{3, 4}}, [](const V& x) { return sum(x[0]); }},
        {"mean", {{3, 4}}, [](const V& x) { return mean(x[0]); }},
        {"sum over axis 1", {{2, 3, 4}}, [](const V& x) { return sum(x[0], 1); }},
        {"sum over axis -1, keepdim", {{2, 3, 4}}, [](const V& x) { return sum(x[0], -1, true); }},
        {"mean over axis 0", {{3, 4}}, [](const V& x) { return mean(x[0], 0); }},
        {"mean over axis 0, wider than one tile of columns", {{3, 300}}, [](const V& x) { return mean(x[0], 0); }},
        {"mean over axis -2, keepdim", {{2, 3, 4}}, [](const V& x) { return mean(x[0], -2, true); }},
        {"max over axis 1", {{2, 5, 3}}, [](const V& x) { return ops::max(x[0], 1); }, 0.0f, false, 0.05f},
        {"max over axis -1, keepdim", {{3, 6}}, [](const V& x) { return ops::max(x[0], -1, true); }, 0.0f, false, 0.05f},
        {"max over axis 0", {{4, 3}}, [](const V& x) { return ops::max(x[0], 0); }, 0.0f, false, 0.05f},
        {"cross_entropy, ignore_index", {{2, 3, 5}},
         [](const V& x) { return cross_entropy(x[0], ids({1, -100, 4, 0, 2, -100}, {2, 3})); }},
        {"mse", {{3, 4}, {3, 4}}, [](const V& x) { return mse(x[0], x[1]); }},
    };
}

// Inputs for a case: normal(0, 1), seeded, pushed away from zero when asked.
inline std::vector<Tensor> case_inputs(const OpCase& c, std::uint64_t seed) {
    std::vector<Tensor> inputs;
    Generator g(seed);
    for (const Shape& s : c.inputs) {
        Tensor t = empty(s);
        g.fill_normal(t.data(), t.size());
        if (c.away_from_zero > 0)
            for (float& v : t) v = v >= 0 ? v + c.away_from_zero : v - c.away_from_zero;
        if (c.positive)
            for (float& v : t) v = std::abs(v);
        inputs.push_back(std::move(t));
    }
    if (c.min_gap > 0) {
        std::vector<float*> all;  // sorted by value, then pushed up until neighbours are min_gap apart
        for (Tensor& t : inputs)
            for (float& v : t) all.push_back(&v);
        std::stable_sort(all.begin(), all.end(), [](const float* a, const float* b) { return *a < *b; });
        for (std::size_t i = 1; i < all.size(); ++i) *all[i] = std::max(*all[i], *all[i - 1] + c.min_gap);
        for (float* v : all)
            for (float k : c.kinks)
                if (std::abs(*v - k) < c.min_gap) *v = *v >= k ? k + c.min_gap : k - c.min_gap;
    }
    return inputs;
}

}  // namespace remat::test
