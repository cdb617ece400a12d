// Prints the initial weights' bytes of one small model built three ways from one seed; compiled by
// each compiler in turn by check.sh, which compares the lines.
//   chain       nn::chain(Linear::create(…, rng), …): argument order unspecified — may differ
//   chain_from  nn::chain_from(rng, makers…): left to right everywhere
//   braced      nn::Chain{std::tuple{Linear::create(…, rng), …}}: a braced list, left to right
#include <cstdio>
#include <string>

#include "remat/layers.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;

template <class Model>
void print(const char* idiom, Model& model) {
    std::string hex;
    tree::foreach_parameter(model, [&](const std::string&, const Param& p) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(p.value.data());
        char buf[3];
        for (std::size_t i = 0; i < p.size() * sizeof(float); ++i) {
            std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
            hex += buf;
        }
    });
    std::printf("%s %s\n", idiom, hex.c_str());
}

int main() {
    {
        Generator rng(7);
        auto model = nn::chain(nn::Linear::create(3, 4, rng), nn::tanh, nn::Linear::create(4, 2, rng));
        print("chain", model);
    }
    {
        Generator rng(7);
        auto model = nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(3, 4, g); }, nn::tanh,
                                    [](Generator& g) { return nn::Linear::create(4, 2, g); });
        print("chain_from", model);
    }
    {
        Generator rng(7);
        auto model = nn::Chain{std::tuple{nn::Linear::create(3, 4, rng), nn::tanh, nn::Linear::create(4, 2, rng)}};
        print("braced", model);
    }
}
