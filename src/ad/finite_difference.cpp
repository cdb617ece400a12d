#include "remat/ad/finite_difference.hpp"

#include "remat/core/error.hpp"

namespace remat::ad {

Var FiniteDifference::leaf(const Tensor& tensor) { return Var(std::shared_ptr<const Tensor>(std::shared_ptr<void>(), &tensor)); }

Var FiniteDifference::record(OpKind, std::shared_ptr<const Tensor> output, const std::vector<Var>&, Pullback) {
    return Var(std::move(output));
}

Gradient FiniteDifference::gradient(const std::function<Var()>& loss_fn, std::span<Tensor* const> wrt) {
    GradMode enable(true);
    auto evaluate = [&] {
        Var loss = loss_fn();
        if (loss.size() != 1)
            throw ShapeError("gradient: the loss must have exactly one element, got shape " +
                             to_string(loss.shape()));
        return static_cast<double>(loss.value().data()[0]);
    };
    Gradient result;
    result.loss = static_cast<float>(evaluate());
    for (Tensor* t : wrt) {
        Tensor g = zeros(t->shape());
        float* x = t->data();
        for (std::size_t i = 0; i < t->size(); ++i) {
            const float original = x[i];
            struct Restore {
                float& slot;
                float value;
                ~Restore() { slot = value; }
            } restore{x[i], original};
            x[i] = original + step_;
            const double up = evaluate();
            x[i] = original - step_;
            const double down = evaluate();
            // Divide by the step actually taken: float rounding changes it slightly.
            const double taken = static_cast<double>(original + step_) - static_cast<double>(original - step_);
            g.data()[i] = static_cast<float>((up - down) / taken);
        }
        result.grads.push_back(std::move(g));
    }
    return result;
}

}  // namespace remat::ad
