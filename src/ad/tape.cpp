#include "remat/ad/tape.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

#include "remat/core/error.hpp"
#include "src/ops/parallel.hpp"

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

// Unique across every tape of the process, so a Var is never mistaken for one of a later slot.
std::uint64_t next_serial() {
    static std::atomic<std::uint64_t> serial{0};
    return serial.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace

struct Tape::Release {
    std::shared_ptr<Tape*> tape;
    std::int64_t slot;
    std::uint64_t serial;
    template <class P>
    void operator()(P) const {
        if (Tape* t = *tape) t->unref(slot, serial);
    }
};

Tape::Tape() : self_(std::make_shared<Tape*>(this)) {}
Tape::~Tape() { *self_ = nullptr; }  // Vars that outlive the tape release nothing

std::int64_t Tape::new_slot(const Shape& shape, const Tensor* leaf_key, std::int64_t node) {
    slots_.push_back(Slot{shape, std::nullopt, leaf_key, {}, next_serial(), node, 0});
    return static_cast<std::int64_t>(slots_.size()) - 1;
}

// A Var for `slot` that holds it: the slot stays while any copy of the Var does.
Var Tape::handle(std::shared_ptr<const Tensor> value, std::int64_t slot) {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    ++s.refs;
    std::shared_ptr<const void> held(nullptr, Release{self_, slot, s.serial});
    return Var(std::move(value)).recorded(slot, s.serial, std::move(held));
}

void Tape::unref(std::int64_t slot, std::uint64_t serial) {
    const auto s = static_cast<std::size_t>(slot);
    if (s >= slots_.size() || slots_[s].serial != serial) return;  // discarded by reset or truncate
    drop_ref(slot);
}

void Tape::drop_ref(std::int64_t slot) {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    if (--s.refs > 0) return;
    unreachable_.emplace_back(slot, s.serial);
    if (quiet_ == 0 && !collecting_) collect();
}

// Frees every unreachable slot — a node's pullback and saved tensors, a leaf's lookup entry — and
// what only it kept reachable, then pops the newest nodes and slots if they are free. Freed nodes
// behind live ones stay in the vector as empty entries (the order of the rest never changes).
void Tape::collect() {
    collecting_ = true;
    OnExit done{[this] { collecting_ = false; }};
    do {
        free_unreachable();
        while (!nodes_.empty() && slots_[static_cast<std::size_t>(nodes_.back().output)].refs == 0) nodes_.pop_back();
    } while (!unreachable_.empty());  // popping a node can let go of more
    while (!slots_.empty() && slots_.back().refs == 0) slots_.pop_back();
}

void Tape::free_unreachable() {
    while (!unreachable_.empty()) {
        const auto [slot, serial] = unreachable_.back();
        unreachable_.pop_back();
        const auto s = static_cast<std::size_t>(slot);
        if (s >= slots_.size() || slots_[s].serial != serial || slots_[s].refs > 0) continue;
        if (const Tensor* key = slots_[s].leaf_key) {
            auto it = leaf_slots_.find(key);
            if (it != leaf_slots_.end() && it->second == slot) leaf_slots_.erase(it);
        } else if (slots_[s].node >= 0) {
            const auto n = static_cast<std::size_t>(slots_[s].node);
            const std::vector<std::int64_t> inputs = std::move(nodes_[n].inputs);
            nodes_[n].inputs.clear();
            release(n);  // its handles (a checkpoint's inputs) come back here through unreachable_
            for (std::int64_t in : inputs)
                if (in >= 0) drop_ref(in);
        }
    }
}

std::size_t Tape::live_node_count() const {
    std::size_t n = 0;
    for (const Node& node : nodes_) n += slots_[static_cast<std::size_t>(node.output)].refs > 0;
    return n;
}

bool Tape::has_gradient(std::int64_t slot) const {
    const Slot& s = slots_[static_cast<std::size_t>(slot)];
    return s.leaf_key ? leaf_grads_.count(s.leaf_key) > 0 : s.grad.has_value();
}

namespace {
Tensor zeros_on_pool(const Shape& shape) {
    Tensor t = empty(shape);
    ops::detail::fill(t.data(), t.size(), 0.0f);
    return t;
}
}  // namespace

Tensor* Tape::gradient_buffer(std::int64_t slot) {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    if (s.leaf_key) {
        auto it = leaf_grads_.find(s.leaf_key);
        if (it == leaf_grads_.end())
            it = leaf_grads_.emplace(s.leaf_key, LeafGrad{zeros_on_pool(s.shape), {}, false}).first;
        else if (it->second.grad.shape() != s.shape)  // the tensor was reshaped (or a borrowed one's address reused)
            it->second = LeafGrad{zeros_on_pool(s.shape), {}, false};
        if (!it->second.shared && !s.leaf_owner.expired()) {  // pin the tensor's address while the entry lives
            it->second.owner = s.leaf_owner;
            it->second.shared = true;
        }
        return &it->second.grad;
    }
    if (!s.grad) s.grad = zeros_on_pool(s.shape);
    return &*s.grad;
}

void Tape::check_current(const Var& v, const char* what) const {
    if (!v.requires_grad()) return;
    const auto s = static_cast<std::size_t>(v.slot());
    if (s >= slots_.size() || slots_[s].serial != v.epoch())
        throw std::logic_error(std::string(what) +
                               ": this value was recorded before the last backward() or reset() and can no "
                               "longer be differentiated; recompute it in a fresh forward pass");
}

Var Tape::leaf(const Tensor& tensor) { return shared_leaf(borrow(tensor)); }

Var Tape::shared_leaf(std::shared_ptr<const Tensor> tensor) {
    if (!recording()) {
        if (checkpoint_forward_depth_ > 0 && regions_.back().leaves) regions_.back().leaves->push_back(tensor.get());
        return Var(std::move(tensor));
    }
    auto [it, inserted] = leaf_slots_.try_emplace(tensor.get(), -1);
    if (inserted) it->second = new_slot(tensor->shape(), tensor.get(), -1);
    const std::int64_t slot = it->second;
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    if (s.leaf_owner.expired() && tensor.use_count() > 0) s.leaf_owner = tensor;  // borrowed tensors have no owner
    return handle(std::move(tensor), slot);
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
    for (const Var& v : inputs) {
        node.inputs.push_back(v.slot());
        if (v.slot() >= 0) ++slots_[static_cast<std::size_t>(v.slot())].refs;  // reading keeps it reachable
    }
    node.output = new_slot(output->shape(), nullptr, static_cast<std::int64_t>(nodes_.size()));
    node.pullback = std::move(pullback);
    auto slot = node.output;
    nodes_.push_back(std::move(node));
    return handle(std::move(output), slot);
}

Var Tape::record_row_lookup(OpKind kind, std::shared_ptr<const Tensor> output, const Var& table,
                            std::shared_ptr<const IdTensor> rows, Pullback pullback) {
    const std::size_t before = nodes_.size();
    Var out = record(kind, std::move(output), {table}, std::move(pullback));
    if (nodes_.size() > before) nodes_.back().rows_read = std::move(rows);
    return out;
}

Var Tape::checkpointed(CheckpointFn f, std::vector<Var> inputs, KindSet keep) {
    if (!recording()) return f(inputs);
    for (const Var& v : inputs) check_current(v, "checkpointed");
    Node node;
    node.kind = OpKind::checkpoint;
    node.keep = keep;
    Var out;
    {
        regions_.push_back(Region{keep, &node.kept, 0, false, &node.region_leaves});
        OnExit pop{[this] { regions_.pop_back(); }};
        if (checkpoint_check_) {
            // Record the forward only to note what it does, then drop it. Nothing is freed meanwhile,
            // so the forward records exactly what the recomputation (inside backward) will.
            const std::size_t node_mark = nodes_.size(), slot_mark = slots_.size();
            ++quiet_;
            OnExit discard{[&] {
                truncate(node_mark, slot_mark);
                if (--quiet_ == 0 && !unreachable_.empty() && !collecting_) collect();
            }};
            out = f(inputs);
            node.signature = signature_since(node_mark);
            node.region_leaves = leaves_read_since(node_mark);
            node.signature.emplace_back(OpKind::checkpoint, out.shape());  // marks "checked"
            out = Var(out.shared_value());
        } else {
            ++checkpoint_forward_depth_;
            OnExit restore{[this] { --checkpoint_forward_depth_; }};
            out = f(inputs);
        }
    }
    for (const Var& v : inputs)  // an input that is a leaf is read again by the recomputation
        if (v.requires_grad())
            if (const Tensor* key = slots_[static_cast<std::size_t>(v.slot())].leaf_key) node.region_leaves.push_back(key);
    std::sort(node.region_leaves.begin(), node.region_leaves.end());
    node.region_leaves.erase(std::unique(node.region_leaves.begin(), node.region_leaves.end()), node.region_leaves.end());
    // Recorded even when no input requires gradient: the region's parameters do.
    // Its inputs' Vars, kept in the node, keep them reachable.
    node.output = new_slot(out.shape(), nullptr, static_cast<std::int64_t>(nodes_.size()));
    node.checkpoint = std::move(f);
    node.checkpoint_inputs = std::move(inputs);
    auto slot = node.output;
    nodes_.push_back(std::move(node));
    return handle(out.shared_value(), slot);
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

// The leaves node n reads: its recorded inputs, and for a checkpoint those its region reads.
void Tape::add_leaves_read_by(std::size_t n, std::vector<const Tensor*>& leaves) const {
    for (std::int64_t in : nodes_[n].inputs)
        if (in >= 0)
            if (const Tensor* key = slots_[static_cast<std::size_t>(in)].leaf_key) leaves.push_back(key);
    leaves.insert(leaves.end(), nodes_[n].region_leaves.begin(), nodes_[n].region_leaves.end());
}

std::vector<const Tensor*> Tape::leaves_read_since(std::size_t first_node) const {
    std::vector<const Tensor*> leaves;
    for (std::size_t n = first_node; n < nodes_.size(); ++n) add_leaves_read_by(n, leaves);
    return leaves;
}

// Backward hooks: each leaf's uses among the nodes from first_node on, which backward has yet to run.
void Tape::count_leaf_uses(std::size_t first_node) {
    if (!hooks_.leaf_final) return;
    std::vector<const Tensor*> leaves;
    for (std::size_t n = first_node; n < nodes_.size(); ++n) {
        leaves.clear();
        add_leaves_read_by(n, leaves);
        for (const Tensor* leaf : leaves) {
            PendingUses& uses = pending_uses_[leaf];
            if (nodes_[n].rows_read)
                uses.lookups.push_back(n);
            else
                ++uses.other;
        }
    }
    for (std::size_t n = first_node; n < nodes_.size(); ++n)  // a table only ever looked up (positions)
        if (nodes_[n].rows_read) {
            leaves.clear();
            add_leaves_read_by(n, leaves);
            for (const Tensor* leaf : leaves) report_if_only_lookups_left(leaf);
        }
}

// Node n has been backpropagated: its leaves have one use fewer; those with none left are final.
void Tape::finish_leaf_uses(std::size_t n) {
    if (hooks_.progress) hooks_.progress();
    if (!hooks_.leaf_final) return;
    leaves_scratch_.clear();
    add_leaves_read_by(n, leaves_scratch_);
    for (const Tensor* leaf : leaves_scratch_) one_use_less(leaf, nodes_[n].rows_read ? static_cast<std::int64_t>(n) : -1);
}

void Tape::one_use_less(const Tensor* leaf, std::int64_t lookup_node) {
    auto it = pending_uses_.find(leaf);
    if (it == pending_uses_.end()) return;
    PendingUses& uses = it->second;
    if (lookup_node >= 0)
        std::erase(uses.lookups, static_cast<std::size_t>(lookup_node));
    else if (uses.other > 0)
        --uses.other;
    if (uses.other == 0 && uses.lookups.empty()) {
        pending_uses_.erase(it);
        hooks_.leaf_final(*leaf);
    } else {
        report_if_only_lookups_left(leaf);
    }
}

// The rows the pending lookups read are the only ones still to change.
void Tape::report_if_only_lookups_left(const Tensor* leaf) {
    PendingUses& uses = pending_uses_.at(leaf);
    if (!hooks_.leaf_final_except_rows || uses.reported_except_rows || uses.other > 0 || uses.lookups.empty()) return;
    uses.reported_except_rows = true;
    std::vector<std::int64_t> rows;
    for (std::size_t n : uses.lookups) rows.insert(rows.end(), nodes_[n].rows_read->begin(), nodes_[n].rows_read->end());
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    hooks_.leaf_final_except_rows(*leaf, rows);
}

void Tape::backward(const Var& loss) {
    check_current(loss, "backward");
    if (loss.size() != 1)
        throw ShapeError("backward: the loss must have exactly one element, got shape " + to_string(loss.shape()));
    // Backward frees each node as it goes and everything at the end; counting references meanwhile
    // would free nodes it has yet to reach.
    ++quiet_;
    OnExit clear{[this] {
        reset();
        --quiet_;
    }};
    if (!loss.requires_grad()) return;  // nothing recorded depends on a leaf
    Tensor* seed = gradient_buffer(loss.slot());
    seed->data()[0] += 1.0f;
    pending_uses_.clear();
    count_leaf_uses(0);
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
        finish_leaf_uses(n);
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
    count_leaf_uses(node_mark);
    if (hooks_.leaf_final) {  // the region's uses pass to the ops it recorded: its leaves are final once those are done
        const std::vector<const Tensor*> leaves = std::move(nodes_[n].region_leaves);
        nodes_[n].region_leaves.clear();
        for (const Tensor* leaf : leaves) one_use_less(leaf);
    }
    backward_from(node_mark);
}

void Tape::release(std::size_t n) {
    Node& node = nodes_[n];
    node.pullback = nullptr;
    node.checkpoint = nullptr;
    node.checkpoint_inputs.clear();
    node.kept.clear();
    node.region_leaves.clear();
    node.rows_read.reset();
    slots_[static_cast<std::size_t>(node.output)].grad.reset();
}

// Drops the nodes and slots recorded since the marks (called while quiet_: nothing is collected).
void Tape::truncate(std::size_t node_count, std::size_t slot_count) {
    for (std::size_t n = node_count; n < nodes_.size(); ++n)
        for (std::int64_t in : nodes_[n].inputs)
            if (in >= 0 && static_cast<std::size_t>(in) < slot_count) drop_ref(in);
    if (nodes_.size() > node_count) nodes_.resize(node_count);
    for (std::size_t s = slot_count; s < slots_.size(); ++s)
        if (slots_[s].leaf_key) {
            auto it = leaf_slots_.find(slots_[s].leaf_key);
            if (it != leaf_slots_.end() && static_cast<std::size_t>(it->second) == s) leaf_slots_.erase(it);
        }
    if (slots_.size() > slot_count) slots_.resize(slot_count);
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
        result.grads.push_back(it != leaf_grads_.end() ? std::move(it->second.grad) : zeros(t->shape()));
    }
    return result;
}

const Tensor* Tape::grad(const Tensor& leaf) const {
    auto it = leaf_grads_.find(&leaf);
    return it == leaf_grads_.end() ? nullptr : &it->second.grad;
}

Tensor* Tape::grad(const Tensor& leaf) {
    auto it = leaf_grads_.find(&leaf);
    return it == leaf_grads_.end() ? nullptr : &it->second.grad;
}

void Tape::zero_grad() {
    std::erase_if(leaf_grads_, [](const auto& entry) { return entry.second.shared && entry.second.owner.expired(); });
    for (auto& [key, g] : leaf_grads_) ops::detail::fill(g.grad.data(), g.grad.size(), 0.0f);
}
void Tape::clear_grads() { leaf_grads_.clear(); }

void Tape::reset() {
    ++quiet_;
    std::vector<Node> nodes = std::move(nodes_);
    nodes_.clear();
    slots_.clear();
    leaf_slots_.clear();
    nodes.clear();  // the handles their closures held find no slot any more
    unreachable_.clear();
    --quiet_;
}

std::vector<OpKind> Tape::recorded_kinds() const {
    std::vector<OpKind> kinds;
    for (const Node& node : nodes_) kinds.push_back(node.kind);
    return kinds;
}

}  // namespace remat::ad
