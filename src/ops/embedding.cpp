#include "remat/ops/embedding.hpp"

#include <algorithm>

#include "common.hpp"

namespace remat::ops {
using namespace detail;

Var embedding(const Var& weight, const IdTensor& ids) {
    if (weight.dim() != 2) throw ShapeError("embedding: weight must be (vocabulary, features), got " + to_string(weight.shape()));
    const std::size_t V = weight.shape()[0], C = weight.shape()[1], n = ids.size();
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t id = ids.data()[i];
        if (id < 0 || static_cast<std::size_t>(id) >= V)
            throw ValueError("embedding: id " + std::to_string(id) + " at position " + std::to_string(i) +
                             " is out of range for a vocabulary of " + std::to_string(V));
    }
    Shape out_shape(ids.shape().begin(), ids.shape().end());
    out_shape.push_back(C);
    Tensor y = empty(out_shape);  // (..., C)
    const float* w = weight.value().data();
    for (std::size_t i = 0; i < n; ++i) {
        const float* row = w + static_cast<std::size_t>(ids.data()[i]) * C;
        std::copy(row, row + C, y.data() + i * C);
    }
    if (!ad::should_record(weight)) return Var(std::move(y));
    auto saved_ids = std::make_shared<const IdTensor>(ids);
    auto pullback = [saved_ids, C](const Tensor& dy, ad::Grads& g) {
        // Scatter-add in position order: repeated ids accumulate deterministically.
        float* dw = g[0].data();
        for (std::size_t i = 0; i < saved_ids->size(); ++i) {
            float* row = dw + static_cast<std::size_t>(saved_ids->data()[i]) * C;
            const float* src = dy.data() + i * C;
            for (std::size_t c = 0; c < C; ++c) row[c] += src[c];
        }
    };
    return ad::record_row_lookup(ad::OpKind::embedding, share(std::move(y)), weight, saved_ids, std::move(pullback));
}

}  // namespace remat::ops
