#include "remat/ops/elementwise.hpp"

#include "broadcast.hpp"
#include "common.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// neg_div_square is div's pullback for b: −x / y² (torch's −grad·a / (b·b), with x = grad·a).
enum class Binary { add, sub, mul, div, maximum, minimum, neg_div_square };

template <Binary op>
float apply(float x, float y) {
    if constexpr (op == Binary::add) return x + y;
    if constexpr (op == Binary::sub) return x - y;
    if constexpr (op == Binary::mul) return x * y;
    if constexpr (op == Binary::div) return x / y;
    // Comparisons are false for NaN: a NaN in either input comes out.
    if constexpr (op == Binary::maximum) return x > y || x != x ? x : y;
    if constexpr (op == Binary::minimum) return x < y || x != x ? x : y;
    return -x / (y * y);
}

template <Binary op>
Tensor forward(const char* name, const Tensor& a, const Tensor& b) {
    const Shape out_shape = broadcast_shape(name, a.shape(), b.shape());
    Tensor out = empty(out_shape);
    float* o = out.data();
    const float *x = a.data(), *y = b.data();
    if (a.shape() == b.shape()) {
        parallel_ranges(out.size(), elementwise_grain, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) o[i] = apply<op>(x[i], y[i]);
        });
    } else if (const std::size_t n = suffix_length(b.shape(), a.shape())) {  // a bias: rows of a, one b
        parallel_ranges(a.size() / n, rows_grain(n), [&](std::size_t begin, std::size_t end) {
            for (std::size_t r = begin; r < end; ++r)
                for (std::size_t j = 0; j < n; ++j) o[r * n + j] = apply<op>(x[r * n + j], y[j]);
        });
    } else {
        for_each_broadcast(out_shape, broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape),
                           [&](std::size_t i, std::size_t ia, std::size_t ib) { o[i] = apply<op>(x[ia], y[ib]); });
    }
    return out;
}

// dy (the broadcast shape of a and b) times ∂op(a, b)/∂a (input 0) or ∂/∂b (input 1) of maximum or
// minimum, torch's rule: half to each on a tie, none to the loser, all to both where either is NaN
// (no comparison holds there).
template <Binary op>
Tensor select_gradient(const Tensor& dy, const Tensor& a, const Tensor& b, std::size_t input) {
    Tensor out = empty(dy.shape());
    float* o = out.data();
    const float *g = dy.data(), *x = a.data(), *y = b.data();
    auto pick = [input](float dy, float x, float y) {
        if (x == y) return 0.5f * dy;
        const bool a_wins = op == Binary::maximum ? x > y : x < y;
        const bool b_wins = op == Binary::maximum ? y > x : y < x;
        return (input == 0 ? b_wins : a_wins) ? 0.0f : dy;
    };
    if (a.shape() == b.shape()) {
        for (std::size_t i = 0, n = out.size(); i < n; ++i) o[i] = pick(g[i], x[i], y[i]);
    } else {
        for_each_broadcast(dy.shape(), broadcast_strides(a.shape(), dy.shape()), broadcast_strides(b.shape(), dy.shape()),
                           [&](std::size_t i, std::size_t ia, std::size_t ib) { o[i] = pick(g[i], x[ia], y[ib]); });
    }
    return out;
}

template <Binary op>
Var binary(const char* name, const Var& a, const Var& b) {
    Tensor out = forward<op>(name, a.value(), b.value());
    if (!ad::should_record(a, b)) return Var(std::move(out));
    std::shared_ptr<const Tensor> av, bv;
    if constexpr (op != Binary::add && op != Binary::sub) {
        av = a.shared_value();
        bv = b.shared_value();
    }
    return ad::record(ad::OpKind::elementwise, share(std::move(out)), {a, b}, [av, bv](const Tensor& dy, ad::Grads& g) {
        for (std::size_t i = 0; i < 2; ++i) {
            if (!g.wants(i)) continue;
            if constexpr (op == Binary::mul) {
                // d(a·b)/da = b, broadcast to dy's shape first, then summed back.
                accumulate_unbroadcast(g[i], forward<Binary::mul>("mul", dy, i == 0 ? *bv : *av));
            } else if constexpr (op == Binary::div) {
                if (i == 0)
                    accumulate_unbroadcast(g[0], forward<Binary::div>("div", dy, *bv));
                else
                    accumulate_unbroadcast(g[1], forward<Binary::neg_div_square>("div", forward<Binary::mul>("div", dy, *av), *bv));
            } else if constexpr (op == Binary::maximum || op == Binary::minimum) {
                accumulate_unbroadcast(g[i], select_gradient<op>(dy, *av, *bv, i));
            } else if (op == Binary::sub && i == 1) {
                Tensor negated = dy;
                for (float& v : negated) v = -v;
                accumulate_unbroadcast(g[i], negated);
            } else {
                accumulate_unbroadcast(g[i], dy);
            }
        }
    });
}

// t read as shape `to` (which it broadcasts to), materialised.
Tensor expand(const Tensor& t, const Shape& to) {
    Tensor out = empty(to);
    float* o = out.data();
    const float* s = t.data();
    const std::vector<std::size_t> none(to.size(), 0);
    for_each_broadcast(to, broadcast_strides(t.shape(), to), none, [&](std::size_t i, std::size_t it, std::size_t) { o[i] = s[it]; });
    return out;
}

// dy where the (expanded) condition is ≠ 0 (take = true) or = 0 (take = false), else 0.
Tensor gradient_where(const Tensor& dy, const Tensor& condition, bool take) {
    const Tensor expanded = condition.shape() == dy.shape() ? Tensor() : expand(condition, dy.shape());
    const float* c = condition.shape() == dy.shape() ? condition.data() : expanded.data();
    Tensor out = empty(dy.shape());
    for (std::size_t i = 0, n = out.size(); i < n; ++i) out.data()[i] = (c[i] != 0.0f) == take ? dy.data()[i] : 0.0f;
    return out;
}
}  // namespace

Var add(const Var& a, const Var& b) { return binary<Binary::add>("add", a, b); }
Var sub(const Var& a, const Var& b) { return binary<Binary::sub>("sub", a, b); }
Var mul(const Var& a, const Var& b) { return binary<Binary::mul>("mul", a, b); }
Var div(const Var& a, const Var& b) { return binary<Binary::div>("div", a, b); }
Var maximum(const Var& a, const Var& b) { return binary<Binary::maximum>("maximum", a, b); }
Var minimum(const Var& a, const Var& b) { return binary<Binary::minimum>("minimum", a, b); }

Var scale(const Var& x, float factor) {
    Tensor y = empty(x.shape());
    const float* s = x.value().data();
    for (std::size_t i = 0, n = y.size(); i < n; ++i) y.data()[i] = s[i] * factor;
    if (!ad::should_record(x)) return Var(std::move(y));
    return ad::record(ad::OpKind::elementwise, share(std::move(y)), {x}, [factor](const Tensor& dy, ad::Grads& g) {
        float* d = g[0].data();
        for (std::size_t i = 0, n = dy.size(); i < n; ++i) d[i] += dy.data()[i] * factor;
    });
}

Var where(const Var& condition, const Var& a, const Var& b) {
    const Shape &sc = condition.shape(), &sa = a.shape(), &sb = b.shape();
    Shape out_shape;
    try {
        out_shape = broadcast_shape("where", sc, broadcast_shape("where", sa, sb));
    } catch (const ShapeError&) {
        throw ShapeError("where: shapes cannot be broadcast together: condition " + to_string(sc) + ", a " + to_string(sa) +
                         ", b " + to_string(sb));
    }
    const Tensor& cv = condition.value();
    const Tensor expanded = sc == out_shape ? Tensor() : expand(cv, out_shape);
    const float* c = sc == out_shape ? cv.data() : expanded.data();
    Tensor out = empty(out_shape);
    float* o = out.data();
    const float *x = a.value().data(), *y = b.value().data();
    if (sa == out_shape && sb == out_shape) {
        parallel_ranges(out.size(), elementwise_grain, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) o[i] = c[i] != 0.0f ? x[i] : y[i];
        });
    } else {
        for_each_broadcast(out_shape, broadcast_strides(sa, out_shape), broadcast_strides(sb, out_shape),
                           [&](std::size_t i, std::size_t ia, std::size_t ib) { o[i] = c[i] != 0.0f ? x[ia] : y[ib]; });
    }
    if (!ad::should_record(a, b)) return Var(std::move(out));
    // The condition as given, not expanded: backward expands it again rather than keeping a full copy.
    return ad::record(ad::OpKind::elementwise, share(std::move(out)), {a, b},
                      [cond = condition.shared_value()](const Tensor& dy, ad::Grads& g) {
                          for (std::size_t i = 0; i < 2; ++i)
                              if (g.wants(i)) accumulate_unbroadcast(g[i], gradient_where(dy, *cond, i == 0));
                      });
}

}  // namespace remat::ops
