#pragma once
// Embedding: ids (…) -> rows of weight (V, C): (…, C).
#include "remat/layers/layer.hpp"
#include "remat/tree/node.hpp"

namespace remat::nn {

struct Embedding {
    BOOST_HANA_DEFINE_STRUCT(Embedding, (Param, weight));
    static constexpr const char* name = "Embedding";

    static Embedding create(std::size_t vocabulary, std::size_t features, Generator& rng, float std = 0.02f);
    std::size_t vocabulary() const { return weight.shape()[0]; }
    std::size_t features() const { return weight.shape()[1]; }
    std::string describe() const;
    Var operator()(const IdTensor& ids) const;
};

}  // namespace remat::nn
