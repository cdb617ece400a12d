#pragma once
// The default backend: a reverse-mode tape (a Wengert list of nodes in a vector, replayed backwards).
//
// Leaf gradients (parameters, inputs) accumulate across backward() calls, keyed by the leaf tensor's
// address, until zero_grad() — as PyTorch's .grad does (a Param's tensor keeps its address when the
// model moves: core/param.hpp). Everything else is freed as soon as backward has used it — or as soon
// as nothing can reach it: each slot counts the Vars holding it and the recorded ops reading it, and
// a recording whose count drops to zero (an evaluation pass whose result went out of scope) is
// released with its saved tensors, and popped off the tape if it is the newest. A checkpoint node
// recomputes its region onto the *end* of this same tape, bound to the original input slots,
// backpropagates over the appended nodes and truncates them again, so the order of every gradient
// accumulation — and therefore every bit — matches the unwrapped model.
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "remat/ad/backend.hpp"

namespace remat::ad {

class Tape final : public Backend {
public:
    Tape();
    ~Tape() override;
    Tape(const Tape&) = delete;  // Vars point back at their tape
    Tape& operator=(const Tape&) = delete;

    std::string_view name() const override { return "tape"; }
    bool grad_enabled() const override { return grad_enabled_; }
    void set_grad_enabled(bool enabled) override { grad_enabled_ = enabled; }
    bool recording() const override {
        return checkpoint_forward_depth_ == 0 && (grad_enabled_ || recompute_depth_ > 0);
    }
    bool recomputing() const override { return recompute_depth_ > 0; }

    Var leaf(const Tensor& tensor) override;
    Var shared_leaf(std::shared_ptr<const Tensor> tensor) override;
    Var record(OpKind kind, std::shared_ptr<const Tensor> output, const std::vector<Var>& inputs,
               Pullback pullback) override;
    Var record_row_lookup(OpKind kind, std::shared_ptr<const Tensor> output, const Var& table,
                          std::shared_ptr<const IdTensor> rows, Pullback pullback) override;
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
    // Zero-fills every accumulated gradient (keeping the buffers, as optimisers expect) and frees
    // those of parameters that no longer exist.
    void zero_grad();
    // Frees every accumulated gradient.
    void clear_grads();

    // Watches the next backward() calls (data parallel: summing each gradient across processes
    // while backward goes on). leaf_final(t) is called as soon as leaf tensor t's gradient has had
    // every contribution of this backward — after the last recorded op reading t, or the last
    // checkpointed region whose forward read it, has been backpropagated (the gradient may be
    // absent: grad(t) == nullptr); leaves the recording never read are not reported. Before that,
    // leaf_final_except_rows(t, rows) is called once when all t's uses left are row lookups
    // (record_row_lookup, e.g. a tied embedding after the output layer's backward): every row of the
    // gradient but `rows` (sorted, distinct) is final. progress() is called after each recorded op's
    // backward. Any may be empty; BackwardHooks{} stops watching.
    struct BackwardHooks {
        std::function<void(const Tensor& leaf)> leaf_final;
        std::function<void(const Tensor& leaf, std::span<const std::int64_t> rows)> leaf_final_except_rows;
        std::function<void()> progress;
    };
    void set_backward_hooks(BackwardHooks hooks) { hooks_ = std::move(hooks); }
    // Discards what has been recorded (e.g. after a forward pass whose result is not needed).
    void reset();

    // Debug check (off by default, on in the tests), like PyTorch's determinism_check: a
    // checkpoint's forward is recorded (then discarded) to note each op's kind and output shape, and
    // its recomputation must record the same sequence — otherwise std::logic_error names the first
    // op that differs. Costs the memory checkpointing would save; for debugging only.
    void set_checkpoint_check(bool enabled) { checkpoint_check_ = enabled; }
    bool checkpoint_check() const { return checkpoint_check_; }

    // Introspection for tests and debugging. node_count() counts released nodes that newer live
    // ones still sit behind (their saved tensors are already freed); live_node_count() does not.
    std::size_t node_count() const { return nodes_.size(); }
    std::size_t live_node_count() const;
    std::vector<OpKind> recorded_kinds() const;

private:
    struct Slot {
        Shape shape;
        std::optional<Tensor> grad;          // for intermediate values
        const Tensor* leaf_key = nullptr;    // for leaves: the gradient lives in leaf_grads_
        std::weak_ptr<const Tensor> leaf_owner;  // a shared leaf's (a Param's) tensor
        std::uint64_t serial = 0;            // unique to this slot: Vars of a freed slot are refused
        std::int64_t node = -1;              // the node computing it (-1 for a leaf)
        std::uint32_t refs = 0;              // Vars holding it + recorded ops reading it
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
        std::vector<const Tensor*> region_leaves;  // leaves the region's (unrecorded) forward read
        std::shared_ptr<const IdTensor> rows_read;  // a row lookup: the only rows of its input it reads
    };
    // The innermost checkpointed region being run: where keep() stores and reuse() takes from.
    struct Region {
        KindSet keep;
        std::vector<std::shared_ptr<const Tensor>>* kept;
        std::size_t next = 0;  // recomputation: the next kept output to hand back
        bool replaying = false;
        std::vector<const Tensor*>* leaves = nullptr;  // forward: where the leaves it reads are noted
    };
    // What a Var's handle calls when its last copy goes: the tape, unless it is gone.
    struct Release;

    std::int64_t new_slot(const Shape& shape, const Tensor* leaf_key, std::int64_t node);
    Var handle(std::shared_ptr<const Tensor> value, std::int64_t slot);
    void unref(std::int64_t slot, std::uint64_t serial);
    void drop_ref(std::int64_t slot);
    void collect();
    void free_unreachable();
    Tensor* gradient_buffer(std::int64_t slot);
    bool has_gradient(std::int64_t slot) const;
    void check_current(const Var& v, const char* what) const;
    void backward_from(std::size_t first_node);
    void run_pullback(std::size_t n);
    void recompute(std::size_t n);
    void release(std::size_t n);
    void truncate(std::size_t node_count, std::size_t slot_count);
    std::vector<std::pair<OpKind, Shape>> signature_since(std::size_t first_node) const;
    void add_leaves_read_by(std::size_t n, std::vector<const Tensor*>& leaves) const;
    std::vector<const Tensor*> leaves_read_since(std::size_t first_node) const;
    void count_leaf_uses(std::size_t first_node);
    void finish_leaf_uses(std::size_t n);
    void one_use_less(const Tensor* leaf, std::int64_t lookup_node = -1);
    void report_if_only_lookups_left(const Tensor* leaf);

    std::vector<Node> nodes_;
    std::vector<Slot> slots_;
    std::unordered_map<const Tensor*, std::int64_t> leaf_slots_;  // lookup only, never iterated
    // A shared leaf's gradient watches its tensor: while the entry lives, the tensor's allocation
    // (made by make_shared) stays reserved, so no other tensor can take its address and inherit its
    // gradient; once the tensor is gone, zero_grad() drops the entry.
    struct LeafGrad {
        Tensor grad;
        std::weak_ptr<const Tensor> owner;
        bool shared = false;  // owner was set (a borrowed leaf has none)
    };
    std::unordered_map<const Tensor*, LeafGrad> leaf_grads_;      // iterated only to zero or free
    std::shared_ptr<Tape*> self_;                    // shared with Var handles; null once destroyed
    std::vector<std::pair<std::int64_t, std::uint64_t>> unreachable_;  // slots at zero refs, to free
    int quiet_ = 0;          // > 0: backward or a checkpoint check owns the tape; free nothing yet
    bool collecting_ = false;
    bool grad_enabled_ = true;
    int checkpoint_forward_depth_ = 0;
    int recompute_depth_ = 0;
    bool checkpoint_check_ = false;
    std::vector<Region> regions_;
    BackwardHooks hooks_;
    // While a watched backward runs: each leaf's uses still to be backpropagated.
    struct PendingUses {
        std::size_t other = 0;                  // uses that may add to any row
        std::vector<std::size_t> lookups;       // row lookups (nodes) reading it
        bool reported_except_rows = false;
    };
    std::unordered_map<const Tensor*, PendingUses> pending_uses_;
    std::vector<const Tensor*> leaves_scratch_;
};

// This thread's default backend.
Tape& default_tape();

}  // namespace remat::ad
