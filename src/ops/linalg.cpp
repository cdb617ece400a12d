#include "remat/ops/linalg.hpp"

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

Var linear(const Var& x, const Var& weight, const Var& bias, WeightLayout layout) {
    const bool in_out = layout == WeightLayout::in_out;
    if (weight.dim() != 2)
        throw ShapeError("linear: weight must be 2-d, got " + to_string(weight.shape()));
    if (x.dim() < 1) throw ShapeError("linear: input must have a feature axis, got a scalar");
    const std::size_t in = in_out ? weight.shape()[0] : weight.shape()[1];
    const std::size_t out = in_out ? weight.shape()[1] : weight.shape()[0];
    if (x.shape().back() != in)
        throw ShapeError("linear: input features " + to_string(x.shape()) + " do not match weight " +
                         to_string(weight.shape()) + (in_out ? " (in, out)" : " (out, in)"));
    const bool has_bias = bias.defined();
    if (has_bias) check_shape("linear: bias", Shape{out}, bias.shape());
    const std::size_t M = leading_rows(x.shape());

    Shape ys = x.shape();
    ys.back() = out;
    const ad::OpKind kind = out < in ? ad::OpKind::narrowing : ad::OpKind::projection;
    const Precision precision = remat::precision();
    const Operand X = operand(x.shared_value(), precision, Role::activation);
    const Operand W = operand(weight.shared_value(), precision, Role::weight);
    std::shared_ptr<const Tensor> y = kept_or_compute(kind, ys, [&] {
        Tensor y = empty(ys);  // (M, out)
        if (has_bias) {
            const float* b = bias.value().data();
            parallel_ranges(M, rows_grain(out), [&](std::size_t begin, std::size_t end) {
                for (std::size_t r = begin; r < end; ++r) std::copy(b, b + out, y.data() + r * out);
            });
        }
        gemm(false, !in_out, M, out, in, X, W, has_bias ? 1.0f : 0.0f, y.data());
        return y;
    });
    if (!(has_bias ? ad::should_record(x, weight, bias) : ad::should_record(x, weight))) return Var(std::move(y));

    std::vector<Var> inputs{x, weight};
    if (has_bias) inputs.push_back(bias);
    return ad::record(kind, std::move(y), inputs,
                      [X, W, in_out, M, in, out, precision](const Tensor& dy, ad::Grads& g) {
                          const Operand dY = operand(dy, precision);
                          if (g.wants(0)) gemm(false, in_out, M, in, out, dY, W, 1.0f, g[0].data());
                          if (g.wants(1)) {
                              if (in_out)
                                  gemm(true, false, in, out, M, X, dY, 1.0f, g[1].data());
                              else
                                  gemm(true, false, out, in, M, dY, X, 1.0f, g[1].data());
                          }
                          if (g.size() > 2 && g.wants(2)) add_column_sums(dy.data(), M, out, g[2].data());
                      });
}

}  // namespace remat::ops
