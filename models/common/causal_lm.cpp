#include "models/common/causal_lm.hpp"

#include <algorithm>

#include "remat/ops/loss.hpp"

namespace remat::models {

namespace {
Shape shape_of(const IdTensor& t) { return Shape(t.shape().begin(), t.shape().end()); }
}  // namespace

void check_mask(const std::string& model, const IdTensor& ids, const IdTensor& attention_mask) {
    if (!std::equal(ids.shape().begin(), ids.shape().end(), attention_mask.shape().begin(), attention_mask.shape().end()))
        throw ShapeError(model + ": attention_mask " + to_string(shape_of(attention_mask)) + " does not match input ids " +
                         to_string(shape_of(ids)));
}

Var shifted_loss(const std::string& model, const Var& logits, const IdTensor& labels) {
    try {
        return ops::next_token_cross_entropy(logits, labels);
    } catch (const ShapeError& e) {
        throw ShapeError(model + " loss: " + e.message().substr(e.message().find("labels")));
    }
}

Var last_position(const Var& hidden) {
    if (hidden.dim() != 3 || hidden.shape()[1] == 0) throw ShapeError("last_position: expected (B, T, C), got " + to_string(hidden.shape()));
    const std::size_t B = hidden.shape()[0], T = hidden.shape()[1], C = hidden.shape()[2];
    Tensor last = empty(Shape{B, C});
    for (std::size_t b = 0; b < B; ++b) std::copy_n(hidden.value().data() + (b * T + T - 1) * C, C, last.data() + b * C);
    return Var(std::move(last));
}

}  // namespace remat::models
