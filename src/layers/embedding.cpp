#include "remat/layers/embedding.hpp"

#include "remat/layers/init.hpp"
#include "remat/ops/embedding.hpp"

namespace remat::nn {

Embedding Embedding::create(std::size_t vocabulary, std::size_t features, Generator& rng, float std) {
    return {Param{init::normal(Shape{vocabulary, features}, std, rng)}};
}

std::string Embedding::describe() const {
    return "Embedding(" + std::to_string(vocabulary()) + " => " + std::to_string(features()) + ")";
}

Var Embedding::operator()(const IdTensor& ids) const {
    if (ids.size() == 0)
        throw ValueError("Embedding: empty batch, ids " + remat::to_string(Shape(ids.shape().begin(), ids.shape().end())));
    return ops::embedding(leaf(weight), ids);
}

}  // namespace remat::nn
