// expect: compiles
// The tree headers stand alone, below the layers: were remat/layers/layer.hpp included, this
// Mode would clash with nn::Mode.
#include "remat/tree/model.hpp"
#include "remat/tree/node.hpp"
#include "remat/tree/parameters.hpp"
#include "remat/tree/show.hpp"
#include "remat/tree/walk.hpp"

namespace remat::nn {
using Mode = int;
}

struct Two {
    BOOST_HANA_DEFINE_STRUCT(Two, (remat::Param, w), (remat::nn::Mode, mode));
};

int main() { return static_cast<int>(remat::tree::summary(Two{}).empty()); }
