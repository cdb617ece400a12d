#include "remat/ops/elementwise.hpp"

#include "broadcast.hpp"
#include "common.hpp"
#include "parallel.hpp"

namespace remat::ops {
using namespace detail;

namespace {
enum class Binary { add, sub, mul };

template <Binary op>
float apply(float x, float y) {
    if constexpr (op == Binary::add) return x + y;
    if constexpr (op == Binary::sub) return x - y;
    return x * y;
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

template <Binary op>
Var binary(const char* name, const Var& a, const Var& b) {
    Tensor out = forward<op>(name, a.value(), b.value());
    if (!ad::should_record(a, b)) return Var(std::move(out));
    std::shared_ptr<const Tensor> av, bv;
    if constexpr (op == Binary::mul) {
        av = a.shared_value();
        bv = b.shared_value();
    }
    return ad::record(ad::OpKind::elementwise, share(std::move(out)), {a, b}, [av, bv](const Tensor& dy, ad::Grads& g) {
        for (std::size_t i = 0; i < 2; ++i) {
            if (!g.wants(i)) continue;
            if constexpr (op == Binary::mul) {
                // d(a·b)/da = b, broadcast to dy's shape first, then summed back.
                accumulate_unbroadcast(g[i], forward<Binary::mul>("mul", dy, i == 0 ? *bv : *av));
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
}  // namespace

Var add(const Var& a, const Var& b) { return binary<Binary::add>("add", a, b); }
Var sub(const Var& a, const Var& b) { return binary<Binary::sub>("sub", a, b); }
Var mul(const Var& a, const Var& b) { return binary<Binary::mul>("mul", a, b); }

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

}  // namespace remat::ops
