#include "remat/ops/linalg.hpp"

#include <algorithm>

#include "broadcast.hpp"
#include "common.hpp"
#include "gemm.hpp"
#include "mixed.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
// The geometry of op(a)·op(b) as `batch` products of (M, K)·(K, N).
struct Product {
    std::size_t batch = 1, M = 0, K = 0, N = 0;
    Shape out;
};

ShapeError product_error(const std::string& why, const Var& a, const Var& b) {
    return ShapeError("matmul: " + why + ": " + to_string(a.shape()) + " · " + to_string(b.shape()));
}

Product analyse(const Var& a, const Var& b, bool ta, bool tb) {
    if (a.dim() < 2 || b.dim() < 2) throw product_error("both operands need at least 2 dimensions", a, b);
    const Shape& as = a.shape();
    const Shape& bs = b.shape();
    Product p;
    std::size_t kb = tb ? bs[bs.size() - 1] : bs[bs.size() - 2];
    p.N = tb ? bs[bs.size() - 2] : bs[bs.size() - 1];
    if (b.dim() == 2 && !ta) {  // a's leading dims flatten into M
        p.M = leading_rows(as);
        p.K = as.back();
        p.out = as;
    } else {
        if (a.dim() != b.dim()) throw product_error("batched operands need the same rank", a, b);
        for (std::size_t i = 0; i + 2 < as.size(); ++i) {
            if (as[i] != bs[i]) throw product_error("batch dimensions differ", a, b);
            p.batch *= as[i];
        }
        p.M = ta ? as[as.size() - 1] : as[as.size() - 2];
        p.K = ta ? as[as.size() - 2] : as[as.size() - 1];
        p.out = as;
        p.out[p.out.size() - 2] = p.M;
    }
    if (p.K != kb) throw product_error("inner dimensions differ", a, b);
    p.out.back() = p.N;
    return p;
}
}  // namespace

Var matmul(const Var& a, const Var& b, bool ta, bool tb) {
    const Product p = analyse(a, b, ta, tb);
    const bool b_shared = b.dim() == 2 && !ta;
    const std::size_t a_step = b_shared ? 0 : p.M * p.K, b_step = b_shared ? 0 : p.K * p.N, c_step = p.M * p.N;
    const Precision precision = remat::precision();
    // A 2-d b shared by every row of a is a weight (a tied LM head's embedding matrix).
    const Operand A = operand(a.shared_value(), precision, Role::activation);
    const Operand B = operand(b.shared_value(), precision, b_shared ? Role::weight : Role::activation);
    std::shared_ptr<const Tensor> c = kept_or_compute(ad::OpKind::matmul, p.out, [&] {
        Tensor out = empty(p.out);  // (batch, M, N)
        for (std::size_t i = 0; i < (b_shared ? 1 : p.batch); ++i)
            gemm(ta, tb, p.M, p.N, p.K, at(A, i * a_step), at(B, i * b_step), 0.0f, out.data() + i * c_step);
        return out;
    });
    if (!ad::should_record(a, b)) return Var(std::move(c));
    return ad::record(ad::OpKind::matmul, std::move(c), {a, b},
                      [A, B, p, ta, tb, b_shared, a_step, b_step, c_step, precision](const Tensor& dc, ad::Grads& g) {
                          const std::size_t count = b_shared ? 1 : p.batch;
                          const Operand dC_all = operand(dc, precision);
                          for (std::size_t i = 0; i < count; ++i) {
                              const Operand Ai = at(A, i * a_step), Bi = at(B, i * b_step), dC = at(dC_all, i * c_step);
                              if (g.wants(0)) {
                                  float* dA = g[0].data() + i * a_step;
                                  if (!ta)
                                      gemm(false, !tb, p.M, p.K, p.N, dC, Bi, 1.0f, dA);  // dC·op(B)ᵀ
                                  else
                                      gemm(tb, true, p.K, p.M, p.N, Bi, dC, 1.0f, dA);  // op(B)·dCᵀ
                              }
                              if (g.wants(1)) {
                                  float* dB = g[1].data() + i * b_step;
                                  if (!tb)
                                      gemm(!ta, false, p.K, p.N, p.M, Ai, dC, 1.0f, dB);  // op(A)ᵀ·dC
                                  else
                                      gemm(true, ta, p.N, p.K, p.M, dC, Ai, 1.0f, dB);  // dCᵀ·op(A)
                              }
                          }
                      });
}

namespace {

// A projection's sizes, checked: x (..., in) by a weight of shape w, as `layout` stores it.
struct Projection {
    bool in_out;
    std::size_t M, in, out;
    Shape ys;
    ad::OpKind kind;
};
Projection projection(const Var& x, const Shape& w, const Var& bias, WeightLayout layout) {
    const bool in_out = layout == WeightLayout::in_out;
    if (w.size() != 2) throw ShapeError("linear: weight must be 2-d, got " + to_string(w));
    if (x.dim() < 1) throw ShapeError("linear: input must have a feature axis, got a scalar");
    const std::size_t in = in_out ? w[0] : w[1];
    const std::size_t out = in_out ? w[1] : w[0];
    if (x.shape().back() != in)
        throw ShapeError("linear: input features " + to_string(x.shape()) + " do not match weight " + to_string(w) +
                         (in_out ? " (in, out)" : " (out, in)"));
    if (bias.defined()) check_shape("linear: bias", Shape{out}, bias.shape());
    Shape ys = x.shape();
    ys.back() = out;
    return {in_out, leading_rows(x.shape()), in, out, ys, out < in ? ad::OpKind::narrowing : ad::OpKind::projection};
}

// The low-rank term's operands, as the product reads them (unset: no term).
struct Update {
    bool defined = false;
    std::size_t r = 0;
    Operand down, up;
};
Update update_operands(const LowRank& u, const Projection& p, Precision precision) {
    if (!u.down.defined() && !u.up.defined()) return {};
    if (!u.down.defined() || !u.up.defined() || u.up.dim() != 2 || u.up.shape()[0] != p.out)
        throw ShapeError("linear: a low-rank term needs down (..., r) and up (" + std::to_string(p.out) + ", r), got " +
                         (u.down.defined() ? to_string(u.down.shape()) : "none") + " and " +
                         (u.up.defined() ? to_string(u.up.shape()) : "none"));
    Shape down = p.ys;
    down.back() = u.up.shape()[1];
    check_shape("linear: low-rank down", down, u.down.shape());
    return {true, down.back(), operand(u.down.shared_value(), precision, Role::activation),
            operand(u.up.shared_value(), precision, Role::weight)};
}

// y = b + down·upᵀ + X·op(W), each term where there is one, or the output a selective policy kept.
std::shared_ptr<const Tensor> project(const Projection& p, const Operand& X, const Operand& W, const Var& bias,
                                      const Update& update) {
    return kept_or_compute(p.kind, p.ys, [&] {
        Tensor y = empty(p.ys);  // (M, out)
        if (bias.defined()) {
            const float* b = bias.value().data();
            parallel_ranges(p.M, rows_grain(p.out), [&](std::size_t begin, std::size_t end) {
                for (std::size_t r = begin; r < end; ++r) std::copy(b, b + p.out, y.data() + r * p.out);
            });
        }
        if (update.defined)
            gemm(false, true, p.M, p.out, update.r, update.down, update.up, bias.defined() ? 1.0f : 0.0f, y.data());
        gemm(false, !p.in_out, p.M, p.out, p.in, X, W, bias.defined() || update.defined ? 1.0f : 0.0f, y.data());
        return y;
    });
}

// The gradients of y = X·op(W) added into g[x_at] (dX = dY·op(W)ᵀ) and g[w_at] (dW), where wanted.
void add_projection_gradients(const Operand& dY, const Operand& X, const Operand& W, bool in_out, std::size_t M, std::size_t in,
                              std::size_t out, ad::Grads& g, std::size_t x_at, std::size_t w_at) {
    if (g.wants(x_at)) gemm(false, in_out, M, in, out, dY, W, 1.0f, g[x_at].data());
    if (!g.wants(w_at)) return;
    if (in_out)
        gemm(true, false, in, out, M, X, dY, 1.0f, g[w_at].data());
    else
        gemm(true, false, out, in, M, dY, X, 1.0f, g[w_at].data());
}

// The op's inputs in pullback order — x, [weight], [bias], [down, up] — and where each one is.
struct Inputs {
    std::vector<Var> vars;
    std::size_t bias_at = 0, down_at = 0;

    Inputs(const Var& x, const Var* weight, const Var& bias, const LowRank& update) : vars{x} {
        if (weight) vars.push_back(*weight);
        if (bias.defined()) {
            bias_at = vars.size();
            vars.push_back(bias);
        }
        if (update.down.defined()) {
            down_at = vars.size();
            vars.push_back(update.down);
            vars.push_back(update.up);
        }
    }
    bool record() const {
        return std::any_of(vars.begin(), vars.end(), [](const Var& v) { return v.requires_grad(); }) &&
               ad::current().recording();
    }
};

// The low-rank term's gradients: d down = dY·up, d up = dYᵀ·down. `down` is unset when up is frozen.
void add_update_gradients(const Operand& dY, const Update& u, std::size_t M, std::size_t out, ad::Grads& g, std::size_t down_at) {
    add_projection_gradients(dY, u.down, u.up, false, M, u.r, out, g, down_at, down_at + 1);
}

// What backward keeps of the term: down only for up's gradient.
Update kept_for_backward(Update u, const LowRank& update) {
    if (u.defined && !update.up.requires_grad()) u.down = {};
    return u;
}

}  // namespace

Var linear(const Var& x, const Var& weight, const Var& bias, WeightLayout layout, const LowRank& update) {
    const Projection p = projection(x, weight.shape(), bias, layout);
    const Precision precision = remat::precision();
    const Operand X = operand(x.shared_value(), precision, Role::activation);
    const Operand W = operand(weight.shared_value(), precision, Role::weight);
    const Update u = update_operands(update, p, precision);
    std::shared_ptr<const Tensor> y = project(p, X, W, bias, u);
    const Inputs inputs(x, &weight, bias, update);
    if (!inputs.record()) return Var(std::move(y));

    // The input is kept for the weight's gradient only: a frozen weight (LoRA's base) needs none.
    const Operand kept_x = weight.requires_grad() ? X : Operand{};
    return ad::record(p.kind, std::move(y), inputs.vars,
                      [X = kept_x, W, U = kept_for_backward(u, update), in_out = p.in_out, M = p.M, in = p.in, out = p.out,
                       bias_at = inputs.bias_at, down_at = inputs.down_at, precision](const Tensor& dy, ad::Grads& g) {
                          const Operand dY = operand(dy, precision);
                          add_projection_gradients(dY, X, W, in_out, M, in, out, g, 0, 1);
                          if (bias_at && g.wants(bias_at)) add_column_sums(dy.data(), M, out, g[bias_at].data());
                          if (U.defined) add_update_gradients(dY, U, M, out, g, down_at);
                      });
}

Var linear(const Var& x, const std::shared_ptr<const HeldBf16>& weight, const Var& bias, WeightLayout layout,
           const LowRank& update) {
    const Projection p = projection(x, weight->shape, bias, layout);
    const Operand X = operand(x.shared_value(), Precision::bf16, Role::activation);
    const Operand W{nullptr, weight->values.data(), weight};
    const Precision precision = remat::precision();  // the low-rank term's
    const Update u = update_operands(update, p, precision);
    std::shared_ptr<const Tensor> y = project(p, X, W, bias, u);
    const Inputs inputs(x, nullptr, bias, update);
    if (!inputs.record()) return Var(std::move(y));

    return ad::record(p.kind, std::move(y), inputs.vars,
                      [W, U = kept_for_backward(u, update), in_out = p.in_out, M = p.M, in = p.in, out = p.out,
                       bias_at = inputs.bias_at, down_at = inputs.down_at, precision](const Tensor& dy, ad::Grads& g) {
                          const Operand dY = operand(dy, Precision::bf16);
                          if (g.wants(0)) gemm(false, in_out, M, in, out, dY, W, 1.0f, g[0].data());
                          if (bias_at && g.wants(bias_at)) add_column_sums(dy.data(), M, out, g[bias_at].data());
                          if (U.defined) add_update_gradients(precision == Precision::bf16 ? dY : operand(dy, precision), U, M, out, g, down_at);
                      });
}

}  // namespace remat::ops
