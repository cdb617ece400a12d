#include "remat/ad/tape.hpp"

#include <stdexcept>
#include <string>

#include "remat/core/error.hpp"

namespace remat::ad {
namespace {
// A Var that refers to a caller-owned tensor without owning it.
std::shared_ptr<const Tensor> borrow(const Tensor& t) { return {std::shared_ptr<void>(), &t}; }

void add_into(Tensor& into, const Tensor& from) {
    float* d = into.data();
    const float* s = from.data();
    for (std::size_t i = 0, n = into.size(); i < n; ++i) d[i] += s[i];
}

// Runs `undo` when the scope ends, normally or by exception.
template <class F>
struct OnExit {
    F undo;
    ~OnExit() { undo(); }
};
template <class F>
OnExit(F) -> OnExit<F>;
}  // namespace

std::int64_t Tape::new_slot(const Shape& shape, const Tensor* leaf_key) {
    slots_.push_back(Slot{shape, std::nullopt, leaf_key});
    return static_cast<std::int64_t>(slots_.size()) - 1;
}

bool Tape::has_gradient(std::int64_t slot) const {
    const Slot& s = slots_[static_cast<std::size_t>(slot)];
    return s.leaf_key ? leaf_grads_.count(s.leaf_key) > 0 : s.grad.has_value();
}

Tensor* Tape::gradient_buffer(std::int64_t slot) {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    if (s.leaf_key) {
        auto it = leaf_grads_.find(s.leaf_key);
        if (it == leaf_grads_.end()) it = leaf_grads_.emplace(s.leaf_key, zeros(s.shape)).first;
        return &it->second;
    }
    if (!s.grad) s.grad = zeros(s.shape);
    return &*s.grad;
}

void Tape::check_current(const Var& v, const char* what) const {
    if (v.requires_grad() && v.epoch() != epoch_)
        throw std::logic_error(std::string(what) +
                               ": this value was recorded before the last backward() or reset() and can no "
                               "longer be differentiated; recompute it in a fresh forward pass");
}

Var Tape::leaf(const Tensor& tensor) {
    if (!recording()) return Var(borrow(tensor));
    auto [it, inserted] = leaf_slots_.try_emplace(&tensor, -1);
    if (inserted) it->second = new_slot(tensor.shape(), &tensor);
    return Var(borrow(tensor)).with_slot(it->second, epoch_);
}

Var Tape::record(OpKind kind, std::shared_ptr<const Tensor> output, const std::vector<Var>& inputs,
                 Pullback pullback) {
    bool any = false;
    for (const Var& v : inputs) {
        check_current(v, "record");
        any = any || v.requires_grad();
    }
    if (!recording() || !any) return Var(std::move(output));
    Node node;
    node.kind = kind;
    node.inputs.reserve(inputs.size());
    for (const Var& v : inputs) node.inputs.push_back(v.slot());
    node.output = new_slot(output->shape(), nullptr);
    node.pullback = std::move(pullback);
    auto slot = node.output;
    nodes_.push_back(std::move(node));
    return Var(std::move(output)).with_slot(slot, epoch_);
}

Var Tape::checkpointed(CheckpointFn f, std::vector<Var> inputs, KindSet keep) {
    if (!recording()) return f(inputs);
    for (const Var& v : inputs) check_current(v, "checkpointed");
    Node node;
    node.kind = OpKind::checkpoint;
    node.keep = keep;
    Var out;
    {
        regions_.push_back(Region{keep, &node.kept});
        OnExit pop{[this] { regions_.pop_back(); }};
        if (checkpoint_check_) {
            // Record the forward only to note what it does, then drop it.
            const std::size_t node_mark = nodes_.size(), slot_mark = slots_.size();
            OnExit discard{[&] { truncate(node_mark, slot_mark); }};
            out = f(inputs);
            node.signature = signature_since(node_mark);
            node.signature.emplace_back(OpKind::checkpoint, out.shape());  // marks "checked"
            out = Var(out.shared_value());
        } else {
            ++checkpoint_forward_depth_;
            OnExit restore{[this] { --checkpoint_forward_depth_; }};
            out = f(inputs);
        }
    }
    // Recorded even when no input requires gradient: the region's parameters do.
    node.output = new_slot(out.shape(), nullptr);
    node.checkpoint = std::move(f);
    node.checkpoint_inputs = std::move(inputs);
    auto slot = node.output;
    nodes_.push_back(std::move(node));
    return Var(out.shared_value()).with_slot(slot, epoch_);
}

std::shared_ptr<const Tensor> Tape::reuse(OpKind kind) {
    if (regions_.empty()) return nullptr;
    Region& r = regions_.back();
    if (!r.replaying || !r.keep.contains(kind) || r.next >= r.kept->size()) return nullptr;
    return (*r.kept)[r.next++];
}

void Tape::keep(OpKind kind, const std::shared_ptr<const Tensor>& output) {
    if (regions_.empty()) return;
    Region& r = regions_.back();
    if (!r.replaying && r.keep.contains(kind)) r.kept->push_back(output);
}

std::vector<std::pair<OpKind, Shape>> Tape::signature_since(std::size_t first_node) const {
    std::vector<std::pair<OpKind, Shape>> signature;
    for (std::size_t n = first_node; n < nodes_.size(); ++n)
        signature.emplace_back(nodes_[n].kind, slots_[static_cast<std::size_t>(nodes_[n].output)].shape);
    return signature;
}

void Tape::backward(const Var& loss) {
    check_current(loss, "backward");
    if (loss.size() != 1)
        throw ShapeError("backward: the loss must have exactly one element, got shape " + to_string(loss.shape()));
    OnExit clear{[this] { reset(); }};
    if (!loss.requires_grad()) return;  // nothing recorded depends on a leaf
    Tensor* seed = gradient_buffer(loss.slot());
    seed->data()[0] += 1.0f;
    backward_from(0);
}

void Tape::backward_from(std::size_t first_node) {
    for (std::size_t n = nodes_.size(); n-- > first_node;) {
        if (has_gradient(nodes_[n].output)) {
            if (nodes_[n].checkpoint)
                recompute(n);
            else
                run_pullback(n);
        }
        release(n);
    }
}

void Tape::run_pullback(std::size_t n) {
    Node& node = nodes_[n];
    std::vector<Tensor*> buffers(node.inputs.size(), nullptr);
    for (std::size_t i = 0; i < buffers.size(); ++i)
        if (node.inputs[i] >= 0) buffers[i] = gradient_buffer(node.inputs[i]);
    Grads grads(buffers);
    node.pullback(*gradient_buffer(node.output), grads);
}

namespace {
std::string describe(const std::vector<std::pair<OpKind, Shape>>& signature, std::size_t i) {
    if (i >= signature.size()) return "nothing";
    return std::string(name(signature[i].first)) + " " + to_string(signature[i].second);
}

// Throws naming the first op where the recomputation departs from the forward.
void compare(const std::vector<std::pair<OpKind, Shape>>& forward, const std::vector<std::pair<OpKind, Shape>>& again) {
    const std::size_t n = std::max(forward.size(), again.size());
    for (std::size_t i = 0; i < n; ++i)
        if (i >= forward.size() || i >= again.size() || forward[i] != again[i])
            throw std::logic_error("checkpoint check: the recomputation differs from the forward at op " +
                                   std::to_string(i) + ": the forward recorded " + describe(forward, i) +
                                   ", the recomputation " + describe(again, i) +
                                   " (does the region depend on state that changed since the forward?)");
}
}  // namespace

void Tape::recompute(std::size_t n) {
    CheckpointFn f = std::move(nodes_[n].checkpoint);
    std::vector<Var> inputs = std::move(nodes_[n].checkpoint_inputs);
    std::vector<std::shared_ptr<const Tensor>> kept = std::move(nodes_[n].kept);
    const auto signature = std::move(nodes_[n].signature);
    const KindSet keep = nodes_[n].keep;
    const std::int64_t out_slot = nodes_[n].output;
    const std::size_t node_mark = nodes_.size(), slot_mark = slots_.size();
    ++recompute_depth_;
    OnExit restore{[&] {
        truncate(node_mark, slot_mark);
        --recompute_depth_;
    }};
    Var y;
    {
        regions_.push_back(Region{keep, &kept, 0, true});
        OnExit pop{[this] { regions_.pop_back(); }};
        y = f(inputs);
    }
    check_current(y, "checkpointed region");
    if (!signature.empty()) {
        auto again = signature_since(node_mark);
        again.emplace_back(OpKind::checkpoint, y.shape());
        compare(signature, again);
    }
    kept.clear();  // handed back; free them before backpropagating
    if (!y.requires_grad()) return;
    if (static_cast<std::size_t>(y.slot()) >= slot_mark) {
        // Bind the recomputed output to the gradient that reached the checkpoint node.
        Slot& ys = slots_[static_cast<std::size_t>(y.slot())];
        if (ys.leaf_key) {
            add_into(*gradient_buffer(y.slot()), *slots_[static_cast<std::size_t>(out_slot)].grad);
        } else {
            ys.grad = std::move(slots_[static_cast<std::size_t>(out_slot)].grad);
        }
    } else {  // the region returned a value from outside it
        add_into(*gradient_buffer(y.slot()), *slots_[static_cast<std::size_t>(out_slot)].grad);
    }
    backward_from(node_mark);
}

void Tape::release(std::size_t n) {
    Node& node = nodes_[n];
    node.pullback = nullptr;
    node.checkpoint = nullptr;
    node.checkpoint_inputs.clear();
    node.kept.clear();
    slots_[static_cast<std::size_t>(node.output)].grad.reset();
}

void Tape::truncate(std::size_t node_count, std::size_t slot_count) {
    nodes_.resize(node_count);
    for (std::size_t s = slot_count; s < slots_.size(); ++s)
        if (slots_[s].leaf_key) leaf_slots_.erase(slots_[s].leaf_key);
    slots_.resize(slot_count);
}

Gradient Tape::gradient(const std::function<Var()>& loss_fn, std::span<Tensor* const> wrt) {
    GradMode enable(true);
    auto accumulated = std::exchange(leaf_grads_, {});
    OnExit restore{[&] {
        reset();
        leaf_grads_ = std::move(accumulated);
    }};
    reset();
    Var loss = loss_fn();
    backward(loss);
    Gradient result;
    result.loss = loss.value().data()[0];
    for (Tensor* t : wrt) {
        auto it = leaf_grads_.find(t);
        result.grads.push_back(it != leaf_grads_.end() ? std::move(it->second) : zeros(t->shape()));
    }
    return result;
}

const Tensor* Tape::grad(const Tensor& leaf) const {
    auto it = leaf_grads_.find(&leaf);
    return it == leaf_grads_.end() ? nullptr : &it->second;
}

Tensor* Tape::grad(const Tensor& leaf) {
    auto it = leaf_grads_.find(&leaf);
    return it == leaf_grads_.end() ? nullptr : &it->second;
}

void Tape::zero_grad() {
    for (auto& [key, g] : leaf_grads_) g.fill(0.0f);
}
void Tape::clear_grads() { leaf_grads_.clear(); }

void Tape::reset() {
    nodes_.clear();
    slots_.clear();
    leaf_slots_.clear();
    ++epoch_;
}

std::vector<OpKind> Tape::recorded_kinds() const {
    std::vector<OpKind> kinds;
    for (const Node& node : nodes_) kinds.push_back(node.kind);
    return kinds;
}

}  // namespace remat::ad
