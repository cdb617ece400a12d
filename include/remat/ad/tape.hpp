#pragma once
// The default backend: a reverse-mode tape (a Wengert list of nodes in a vector, replayed backwards).
//
// Leaf gradients (parameters, inputs) accumulate across backward() calls, keyed by the leaf tensor's
// address, until zero_grad() — as PyTorch's .grad does. Everything else is freed as soon as backward
// has used it. A checkpoint node recomputes its region onto the *end* of this same tape, bound to
// the original input slots, backpropagates over the appended nodes and truncates them again, so the
// order of every gradient accumulation — and therefore every bit — matches the unwrapped model.
#include <optional>
#include <unordered_map>

#include "remat/ad/backend.hpp"

namespace remat::ad {

class Tape final : public Backend {
public:
    std::string_view name() const override { return "tape"; }
    bool grad_enabled() const override { return grad_enabled_; }
    void set_grad_enabled(bool enabled) override { grad_enabled_ = enabled; }
    bool recording() const override {
        return checkpoint_forward_depth_ == 0 && (grad_enabled_ || recompute_depth_ > 0);
    }
    bool recomputing() const override { return recompute_depth_ > 0; }

    Var leaf(const Tensor& tensor) override;
    Var record(OpKind kind, std::shared_ptr<const Tensor> output, const std::vector<Var>& inputs,
               Pullback pullback) override;
    Var checkpointed(CheckpointFn f, std::vector<Var> inputs, KindSet keep = {}) override;
    std::shared_ptr<const Tensor> reuse(OpKind kind) override;
    void keep(OpKind kind, const std::shared_ptr<const Tensor>& output) override;
    Gradient gradient(const std::function<Var()>& loss, std::span<Tensor* const> wrt) override;

    // Backpropagates from a one-element loss, adding into the leaves' gradients, then clears the
    // recording. Vars recorded before it can no longer be differentiated.
    void backward(const Var& loss);
    // The gradient accumulated for a leaf tensor since the last zero_grad(), or nullptr.
    const Tensor* grad(const Tensor& leaf) const;
    // The same, writable: an optimiser step may clip it in place.
    Tensor* grad(const Tensor& leaf);
    // Zero-fills every accumulated gradient (keeping the buffers, as optimisers expect).
    void zero_grad();
    // Frees every accumulated gradient.
    void clear_grads();
    // Discards what has been recorded (e.g. after a forward pass whose result is not needed).
    void reset();

    // Debug check (off by default, on in the tests), like PyTorch's determinism_check: a
    // checkpoint's forward is recorded (then discarded) to note each op's kind and output shape, and
    // its recomputation must record the same sequence — otherwise std::logic_error names the first
    // op that differs. Costs the memory checkpointing would save; for debugging only.
    void set_checkpoint_check(bool enabled) { checkpoint_check_ = enabled; }
    bool checkpoint_check() const { return checkpoint_check_; }

    // Introspection for tests and debugging.
    std::size_t node_count() const { return nodes_.size(); }
    std::vector<OpKind> recorded_kinds() const;

private:
    struct Slot {
        Shape shape;
        std::optional<Tensor> grad;          // for intermediate values
        const Tensor* leaf_key = nullptr;    // for leaves: the gradient lives in leaf_grads_
    };
    struct Node {
        OpKind kind{};
        std::vector<std::int64_t> inputs;  // slots; -1 for inputs that need no gradient
        std::int64_t output = -1;
        Pullback pullback;
        CheckpointFn checkpoint;  // set for checkpoint nodes, together with the fields below
        std::vector<Var> checkpoint_inputs;
        KindSet keep;
        std::vector<std::shared_ptr<const Tensor>> kept;    // selective: outputs kept by the forward
        std::vector<std::pair<OpKind, Shape>> signature;  // debug check: what the forward recorded
    };
    // The innermost checkpointed region being run: where keep() stores and reuse() takes from.
    struct Region {
        KindSet keep;
        std::vector<std::shared_ptr<const Tensor>>* kept;
        std::size_t next = 0;  // recomputation: the next kept output to hand back
        bool replaying = false;
    };

    std::int64_t new_slot(const Shape& shape, const Tensor* leaf_key);
    Tensor* gradient_buffer(std::int64_t slot);
    bool has_gradient(std::int64_t slot) const;
    void check_current(const Var& v, const char* what) const;
    void backward_from(std::size_t first_node);
    void run_pullback(std::size_t n);
    void recompute(std::size_t n);
    void release(std::size_t n);
    void truncate(std::size_t node_count, std::size_t slot_count);
    std::vector<std::pair<OpKind, Shape>> signature_since(std::size_t first_node) const;

    std::vector<Node> nodes_;
    std::vector<Slot> slots_;
    std::unordered_map<const Tensor*, std::int64_t> leaf_slots_;  // lookup only, never iterated
    std::unordered_map<const Tensor*, Tensor> leaf_grads_;        // iterated only to zero or free
    std::uint64_t epoch_ = 1;
    bool grad_enabled_ = true;
    int checkpoint_forward_depth_ = 0;
    int recompute_depth_ = 0;
    bool checkpoint_check_ = false;
    std::vector<Region> regions_;
};

// This thread's default backend.
Tape& default_tape();

}  // namespace remat::ad
