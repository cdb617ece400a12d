#pragma once
// Combinators, as in Flux:
//   Chain(a, b, c)(x)             = c(b(a(x)))                       layers.0, layers.1, …
//   SkipConnection(layer, conn)(x) = conn(layer(x), x)                e.g. a residual: conn = Add
//   Parallel(conn, a, b)(x)        = conn(a(x), b(x))
#include <tuple>

#include "remat/layers/layer.hpp"
#include "remat/ops/elementwise.hpp"
#include "remat/ops/shape.hpp"
#include "remat/tree/node.hpp"

namespace remat::nn {

// Connections combine branch outputs (opaque leaves of the tree).
struct Add {
    static constexpr const char* name = "+";
    Var operator()(const Var& a, const Var& b) const { return a + b; }
};
struct Concat {  // along the last axis
    static constexpr const char* name = "concat";
    Var operator()(const Var& a, const Var& b) const { return ops::concat_last({a, b}); }
};

template <class... Layers>
struct Chain {
    BOOST_HANA_DEFINE_STRUCT(Chain, (std::tuple<Layers...>, layers));
    static constexpr const char* name = "Chain";
    static_assert(sizeof...(Layers) > 0, "an empty Chain has nothing to call");

    // The first layer may take something other than a Var (an Embedding takes ids).
    template <class X>
    Var operator()(X&& x) { return run<0>(*this, std::forward<X>(x)); }
    template <class X>
    Var operator()(X&& x) const { return run<0>(*this, std::forward<X>(x)); }

private:
    template <std::size_t I, class Self, class X>
    static Var run(Self& self, X&& x) {
        Var out = call("layers." + std::to_string(I), std::get<I>(self.layers), std::forward<X>(x));
        if constexpr (I + 1 < sizeof...(Layers))
            return run<I + 1>(self, out);
        else
            return out;
    }
};
template <class... Layers>
Chain(std::tuple<Layers...>) -> Chain<Layers...>;

template <class... Layers>
Chain<std::decay_t<Layers>...> chain(Layers&&... layers) {
    return {std::tuple<std::decay_t<Layers>...>{std::forward<Layers>(layers)...}};
}

template <class Layer, class Connection>
struct SkipConnection {
    BOOST_HANA_DEFINE_STRUCT(SkipConnection, (Layer, layer), (Connection, connection));
    static constexpr const char* name = "SkipConnection";

    Var operator()(const Var& x) { return connection(REMAT_CALL(layer, x), x); }
    Var operator()(const Var& x) const { return connection(REMAT_CALL(layer, x), x); }
};
template <class Layer, class Connection>
SkipConnection(Layer, Connection) -> SkipConnection<Layer, Connection>;

template <class Connection, class... Layers>
struct Parallel {
    BOOST_HANA_DEFINE_STRUCT(Parallel, (Connection, connection), (std::tuple<Layers...>, layers));
    static constexpr const char* name = "Parallel";
    static_assert(sizeof...(Layers) > 1, "Parallel needs at least two branches");

    Var operator()(const Var& x) { return run(*this, x); }
    Var operator()(const Var& x) const { return run(*this, x); }

private:
    // connection(connection(l0(x), l1(x)), l2(x)) …
    template <class Self>
    static Var run(Self& self, const Var& x) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            Var outs[] = {call("layers." + std::to_string(I), std::get<I>(self.layers), x)...};
            Var acc = outs[0];
            for (std::size_t i = 1; i < sizeof...(I); ++i) acc = self.connection(acc, outs[i]);
            return acc;
        }(std::index_sequence_for<Layers...>{});
    }
};
template <class Connection, class... Layers>
Parallel(Connection, std::tuple<Layers...>) -> Parallel<Connection, Layers...>;

}  // namespace remat::nn
