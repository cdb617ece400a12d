#pragma once
// A second backend: gradients by central finite differences. It records nothing, runs checkpointed
// regions directly, and answers gradient() by perturbing each requested tensor element by element.
// Slow (two evaluations per element) and approximate, it shares no code with the tape's pullbacks —
// which makes it the independent reference the tape is tested against, and proof that layers and
// Checkpointed<T> work under any backend.
#include "remat/ad/backend.hpp"

namespace remat::ad {

class FiniteDifference final : public Backend {
public:
    explicit FiniteDifference(float step = 1e-2f) : step_(step) {}

    std::string_view name() const override { return "finite-difference"; }
    bool grad_enabled() const override { return grad_enabled_; }
    void set_grad_enabled(bool enabled) override { grad_enabled_ = enabled; }
    bool recording() const override { return false; }
    bool recomputing() const override { return false; }

    Var leaf(const Tensor& tensor) override;
    Var shared_leaf(std::shared_ptr<const Tensor> tensor) override { return Var(std::move(tensor)); }
    Var record(OpKind kind, std::shared_ptr<const Tensor> output, const std::vector<Var>& inputs,
               Pullback pullback) override;
    Var checkpointed(CheckpointFn f, std::vector<Var> inputs, KindSet) override { return f(inputs); }
    std::shared_ptr<const Tensor> reuse(OpKind) override { return nullptr; }
    void keep(OpKind, const std::shared_ptr<const Tensor>&) override {}
    Gradient gradient(const std::function<Var()>& loss, std::span<Tensor* const> wrt) override;

    float step() const { return step_; }

private:
    float step_;
    bool grad_enabled_ = true;
};

}  // namespace remat::ad
