// expect: has a member (or a base) outside BOOST_HANA_DEFINE_STRUCT
// `gain` is not reflected: every walk that rebuilds the struct would reset it to 1.
#include "common.hpp"

template <class Mlp>
struct Residual {
    BOOST_HANA_DEFINE_STRUCT(Residual, (nn::LayerNorm, norm), (Mlp, mlp));
    float gain = 1.0f;
    Var operator()(const Var& x) const { return x + mlp(norm(x)) * gain; }
};
template <class Mlp>
Residual(nn::LayerNorm, Mlp) -> Residual<Mlp>;

int main() {
    Generator rng(1);
    Residual<nn::Linear> r{nn::LayerNorm::create(4), nn::Linear::create(4, 4, rng), 3.0f};
    auto same = tree::postwalk([](auto&& node) { return std::move(node); }, std::move(r));
    (void)same;
}
