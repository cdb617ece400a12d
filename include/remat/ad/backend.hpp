#pragma once
// The AD backend interface: the only thing layers, ops and Checkpointed<T> talk to.
//
// Why an abstract class and not a concept: a concept would make every op and every layer a template
// over the backend, and every header heavy. Here ops are plain functions compiled once in src/, the
// current backend is a thread-local pointer set by an RAII scope (UseBackend), and a virtual call per
// recorded *op* (never per element) costs nothing measurable next to the kernels.
#include "remat/core/param.hpp"
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "remat/ad/var.hpp"

namespace remat::ad {

// What an op is, so that selective checkpointing can decide per kind what to keep.
enum class OpKind : std::uint8_t {
    matmul,       // plain matrix products (attention scores, P·V)
    projection,   // parameterised affine maps (Linear, Conv1D): x·W + b, at least as many outputs as inputs
    narrowing,    // the same with fewer outputs than inputs (GPT-2's and BERT's MLP down projection)
    attention,    // fused attention kernels
    softmax,
    norm,         // layer norm, batch norm
    activation,   // GELU, ReLU, tanh, sigmoid
    elementwise,  // add, mul, div, maximum, where, exp, log, clamp, …
    reduction,    // sum, mean, max (all elements or one axis)
    embedding,
    dropout,
    shape,        // reshape, permute, slice, concat: data movement only
    loss,
    checkpoint,   // a checkpointed region
};
std::string_view name(OpKind kind);

// A set of op kinds (selective checkpointing keeps the outputs of these).
class KindSet {
public:
    constexpr KindSet() = default;
    constexpr KindSet(std::initializer_list<OpKind> kinds) {
        for (OpKind k : kinds) bits_ |= bit(k);
    }
    constexpr bool contains(OpKind k) const { return (bits_ & bit(k)) != 0; }
    constexpr bool empty() const { return bits_ == 0; }
    constexpr bool operator==(const KindSet&) const = default;
    constexpr KindSet operator|(const KindSet& other) const {
        KindSet s;
        s.bits_ = bits_ | other.bits_;
        return s;
    }

private:
    static constexpr std::uint32_t bit(OpKind k) { return 1u << static_cast<unsigned>(k); }
    std::uint32_t bits_ = 0;
};

// The gradient buffers of an op's inputs, handed to its pullback. grads[i] is already allocated
// (zero on first use); a pullback *adds* into it — one accumulation path, so the bits of a sum never
// depend on which contribution came first. wants(i) is false for inputs that need no gradient.
class Grads {
public:
    explicit Grads(std::span<Tensor* const> buffers) : buffers_(buffers) {}
    bool wants(std::size_t i) const { return buffers_[i] != nullptr; }
    Tensor& operator[](std::size_t i) const { return *buffers_[i]; }
    std::size_t size() const { return buffers_.size(); }

private:
    std::span<Tensor* const> buffers_;
};

// Adds d(loss)/d(inputs) into grads, given d(loss)/d(output).
using Pullback = std::function<void(const Tensor& grad_output, Grads& grads)>;
// A region to checkpoint. Called once for the forward and again for each recomputation.
using CheckpointFn = std::function<Var(const std::vector<Var>& inputs)>;

struct Gradient {
    float loss = 0;
    std::vector<Tensor> grads;  // one per requested tensor, in request order
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string_view name() const = 0;

    // The user's gradient mode: false inside NoGrad. Layers in automatic mode read this.
    virtual bool grad_enabled() const = 0;
    virtual void set_grad_enabled(bool enabled) = 0;
    // Whether ops record themselves now: false inside NoGrad and inside a checkpoint's forward.
    virtual bool recording() const = 0;
    // True while a checkpointed region is being recomputed (BatchNorm must not update statistics).
    virtual bool recomputing() const = 0;

    // A caller-owned tensor (parameter or input) as a differentiable leaf. Leaves always receive
    // gradient, whether or not anything upstream requires it. Never copies the tensor.
    virtual Var leaf(const Tensor& tensor) = 0;
    // The same for a tensor the caller shares (a Param's): a backend that records may keep it alive
    // for as long as the recording reads it, so the caller may move or drop its handle meanwhile.
    virtual Var shared_leaf(std::shared_ptr<const Tensor> tensor) { return leaf(*tensor); }
    // Records an op whose output is `output`; returns it as a Var.
    virtual Var record(OpKind kind, std::shared_ptr<const Tensor> output, const std::vector<Var>& inputs,
                       Pullback pullback) = 0;
    // The same for an op that reads only some rows of `table` (an embedding lookup) and whose
    // pullback adds only to those rows of its gradient: `rows` indexes the table's first dimension. A
    // backend watching backward may report the table's other rows final before the op has run.
    virtual Var record_row_lookup(OpKind kind, std::shared_ptr<const Tensor> output, const Var& table,
                                  std::shared_ptr<const IdTensor> /*rows*/, Pullback pullback) {
        return record(kind, std::move(output), {table}, std::move(pullback));
    }
    // Runs f without recording and keeps only `inputs` — and the outputs of ops whose kind is in
    // `keep` (selective checkpointing); on backward, recomputes f with recording (handing the kept
    // outputs back instead of recomputing them) and backpropagates through it. Without recording,
    // simply f(inputs).
    virtual Var checkpointed(CheckpointFn f, std::vector<Var> inputs, KindSet keep = {}) = 0;
    // For ops of kinds that selective checkpointing may keep: before computing, ask for the output
    // kept by the forward (non-null only while recomputing a region that keeps `kind`); after
    // computing, offer the output to be kept. An op whose pullback needs more than its output (fused
    // attention: its row stats) keeps those too, right after the output, and asks for them in the
    // same order.
    virtual std::shared_ptr<const Tensor> reuse(OpKind kind) = 0;
    virtual void keep(OpKind kind, const std::shared_ptr<const Tensor>& output) = 0;
    // The value of the scalar loss() and its gradient with respect to each tensor in wrt (read
    // through leaf() inside loss()). Gradient mode is enabled for the call.
    virtual Gradient gradient(const std::function<Var()>& loss, std::span<Tensor* const> wrt) = 0;
};

// The backend of this thread: the innermost UseBackend, else this thread's default Tape.
Backend& current();

// Makes `backend` current on this thread for the scope's lifetime.
class UseBackend {
public:
    explicit UseBackend(Backend& backend);
    ~UseBackend();
    UseBackend(const UseBackend&) = delete;
    UseBackend& operator=(const UseBackend&) = delete;

private:
    Backend* previous_;
};

// Gradient mode off (or on) for the scope's lifetime, like torch.no_grad / torch.enable_grad.
class GradMode {
public:
    explicit GradMode(bool enabled);
    ~GradMode();
    GradMode(const GradMode&) = delete;
    GradMode& operator=(const GradMode&) = delete;

private:
    Backend& backend_;
    bool previous_;
};
struct NoGrad : GradMode {
    NoGrad() : GradMode(false) {}
};

inline Var leaf(const Tensor& tensor) { return current().leaf(tensor); }
inline Var checkpointed(CheckpointFn f, std::vector<Var> inputs, KindSet keep = {}) {
    return current().checkpointed(std::move(f), std::move(inputs), keep);
}
inline Gradient gradient(const std::function<Var()>& loss, std::span<Tensor* const> wrt) {
    return current().gradient(loss, wrt);
}

// For op implementations: should this op record itself?
template <class... Vars>
bool should_record(const Vars&... inputs) {
    return (inputs.requires_grad() || ...) && current().recording();
}
// An op's output as record() takes it: moved into shared, immutable storage.
inline std::shared_ptr<const Tensor> share(Tensor&& t) { return std::make_shared<const Tensor>(std::move(t)); }

inline Var record(OpKind kind, std::shared_ptr<const Tensor> output, const std::vector<Var>& inputs,
                  Pullback pullback) {
    return current().record(kind, std::move(output), inputs, std::move(pullback));
}
inline Var record_row_lookup(OpKind kind, std::shared_ptr<const Tensor> output, const Var& table,
                             std::shared_ptr<const IdTensor> rows, Pullback pullback) {
    return current().record_row_lookup(kind, std::move(output), table, std::move(rows), std::move(pullback));
}

}  // namespace remat::ad

namespace remat {

// The parameter as a differentiable leaf — or as a constant when frozen. Never copies; the Var
// shares the parameter's tensor, so it stays valid when the model moves.
inline Var leaf(const Param& p) {
    if (p.frozen) return Var(p.shared_value());
    return ad::current().shared_leaf(p.shared_value());
}

}  // namespace remat
