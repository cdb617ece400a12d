// expect: cannot rebuild a class template from its rewritten members
// A walk wraps `norm`, whose type is not a template parameter of Residual.
#include "common.hpp"

template <class Mlp>
struct Residual {
    BOOST_HANA_DEFINE_STRUCT(Residual, (nn::LayerNorm, norm), (Mlp, mlp));
    Var operator()(const Var& x) const { return x + mlp(norm(x)); }
};
template <class Mlp>
Residual(nn::LayerNorm, Mlp) -> Residual<Mlp>;

int main() {
    Generator rng(1);
    Residual<nn::Linear> r{nn::LayerNorm::create(4), nn::Linear::create(4, 4, rng)};
    auto wrapped = tree::postwalk(
        [](auto&& node) {
            if constexpr (std::is_same_v<tree::bare<decltype(node)>, nn::LayerNorm>)
                return nn::chain(std::move(node));
            else
                return std::move(node);
        },
        std::move(r));
    (void)wrapped;
}
