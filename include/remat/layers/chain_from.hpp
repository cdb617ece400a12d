#pragma once
// nn::chain_from(rng, makers...): a Chain whose layers draw their initial weights from rng in the
// order they are written, under every compiler.
//
//   auto mlp = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(4, 16, g); },
//                             nn::gelu_tanh,
//                             [](Generator& g) { return nn::Linear::create(16, 4, g); });
//
// Why: nn::chain(nn::Linear::create(…, rng), nn::Linear::create(…, rng)) passes the layers as function
// arguments, whose evaluation order C++ leaves unspecified — g++ draws the last layer first, clang
// the first — so one source and one seed give two models. The elements of a braced list, by
// contrast, are evaluated in order ([dcl.init.list]: "the initializer-clauses … are evaluated in the
// order in which they appear"), which is what chain_from uses. A maker is anything callable as
// maker(Generator&) returning a layer; anything else is taken as a layer already built.
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "remat/core/random.hpp"
#include "remat/layers/chain.hpp"

namespace remat::nn {

namespace detail {
template <class M>
decltype(auto) make_layer(M&& m, Generator& rng) {
    if constexpr (std::is_invocable_v<M&, Generator&>)
        return std::invoke(m, rng);
    else
        return std::forward<M>(m);
}
template <class M>
using made_t = std::decay_t<decltype(make_layer(std::declval<M>(), std::declval<Generator&>()))>;
}  // namespace detail

template <class... Makers>
Chain<detail::made_t<Makers>...> chain_from(Generator& rng, Makers&&... makers) {
    return {std::tuple<detail::made_t<Makers>...>{detail::make_layer(std::forward<Makers>(makers), rng)...}};
}

}  // namespace remat::nn
