#pragma once
// Exact gradient checkpointing.
//
//   auto model = set_checkpointing(std::move(plain), Policy::parse("sqrt"));
//
// wraps every block (a layer type that declares `static constexpr bool is_block = true`) in a
// transparent Checkpointed<T>; the policy decides which wrappers are active. An active one keeps
// only its input in the forward pass and recomputes the block during backward, with gradients
// bitwise identical to the plain model's: before the block runs it snapshots every random generator
// its dropouts draw from (each shared generator once) and every stateful layer's resolved mode; the
// recomputation restores them, runs with BatchNorm's running statistics frozen, then puts the live
// generators back where the rest of the step left them. The recomputation itself is the AD
// backend's (ad::checkpointed), so this works with any backend.
//
// The model may be moved between forward and backward (or live in a std::vector that reallocates):
// a region reaches its blocks through their anchors (core/anchor.hpp), not their addresses, and the
// parameters' tensors never move (core/param.hpp). Destroying the model before backward throws
// there. Extra arguments (masks) are copied into the region.
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include "remat/core/anchor.hpp"
#include "remat/layers/layer.hpp"
#include "remat/ops/precision.hpp"
#include "remat/tree/parameters.hpp"
#include "remat/tree/walk.hpp"

namespace remat {

// A layer type is a block when it says so; set_checkpointing wraps every block. Specialise
// checkpoint_candidate to let policies consider other layer types.
template <class T>
concept declares_block = requires { requires T::is_block; };
template <class T>
inline constexpr bool checkpoint_candidate = declares_block<T>;

// How one wrapper behaves (an opaque leaf: it has no parameters and no path).
struct CheckpointOptions {
    bool active = true;
    ad::KindSet keep;         // selective: op kinds whose outputs are kept instead of recomputed
    std::size_t segment = 1;  // run_blocks: this block opens a segment of this many blocks; 0 = inside one
    std::size_t index = 0;    // the block's place among the model's blocks (set_checkpointing's order)
};

namespace detail {
// While a plan is being profiled (planning/profile.hpp), blocks report to this instead of running
// checkpointed: the probe measures them on their real inputs. Null otherwise (one thread-local load).
class BlockProbe {
public:
    virtual ~BlockProbe() = default;
    // `run` is the block (with its extra arguments bound); returns what the model should go on with.
    virtual Var block(std::size_t index, const std::string& kind, const Var& x, std::function<Var(const Var&)> run) = 0;
};
BlockProbe*& block_probe();
}  // namespace detail

// The generators, modes and precision a recomputation must see as the forward saw them.
class Snapshot {
public:
    template <class... Layers>
    static Snapshot of(Layers&... layers) {
        Snapshot s;
        (s.add(layers), ...);
        return s;
    }

    // Notes every generator (each shared one once) and every mode, resolved, inside `layer`.
    template <class Layer>
    void add(Layer& layer) {
        tree::visit(layer, [&](auto& node, const std::string&) {
            using N = tree::bare<decltype(node)>;
            if constexpr (std::is_same_v<N, std::shared_ptr<Generator>>) {
                if (node) add_generator(node);
            } else if constexpr (std::is_same_v<N, Generator>) {
                // One held by value would be copied with its layer and not put back: the recomputation
                // would draw other numbers than the forward did, silently.
                static_assert(!std::is_same_v<N, Generator>,
                              "a layer holds a Generator by value: hold a std::shared_ptr<Generator> (as nn::Dropout does), "
                              "so that checkpointing can replay its draws");
            } else if constexpr (std::is_same_v<N, nn::Mode>) {
                modes_.emplace_back(&node, nn::is_training(node) ? nn::Mode::train : nn::Mode::test);
            }
        });
    }

    // Appends the mode members inside `layer` to `out` in the order add() notes them: where they
    // live now, which is not where add() saw them once the layer has moved.
    template <class Layer>
    static void find_modes(Layer& layer, std::vector<nn::Mode*>& out) {
        tree::visit(layer, [&](auto& node, const std::string&) {
            if constexpr (std::is_same_v<tree::bare<decltype(node)>, nn::Mode>) out.push_back(&node);
        });
    }

    // For the scope's lifetime: generators at their snapshot, modes resolved as in the forward, the
    // forward's precision.
    // A recomputation (not the first run) also puts the live generators back afterwards.
    class Replay {
    public:
        // The modes where add() found them (the layers have not moved).
        Replay(const Snapshot& s, bool recomputation);
        // The same modes found again by find_modes (the layers may have moved).
        Replay(const Snapshot& s, std::vector<nn::Mode*> modes, bool recomputation);
        ~Replay();
        Replay(const Replay&) = delete;
        Replay& operator=(const Replay&) = delete;

    private:
        const Snapshot& snapshot_;
        bool recomputation_;
        std::vector<nn::Mode*> at_;
        std::vector<Generator::State> live_;
        std::vector<nn::Mode> modes_;
        Precision precision_;  // the live one, put back at the end
    };

    // Puts every generator back where the snapshot found it (after work that must not draw from them).
    void rewind() const;

private:
    void add_generator(const std::shared_ptr<Generator>& g);

    // Each generator once, shared: it outlives a move (or the end) of the layer that holds it.
    std::vector<std::pair<std::shared_ptr<Generator>, Generator::State>> generators_;
    std::vector<std::pair<nn::Mode*, nn::Mode>> modes_;  // where add() found them; resolved at the forward
    Precision precision_ = precision();  // when the snapshot is taken, at the forward
};

// run(x) as one checkpointed region: the first call is the forward, later ones recompute under
// the snapshot. The layers it snapshots must stay where they are until backward; checkpoint_blocks
// below is the variant that follows them when they move.
template <class Run>
Var checkpoint_region(Snapshot snapshot, ad::KindSet keep, const Var& x, Run run) {
    return ad::checkpointed(
        [snapshot = std::move(snapshot), run = std::move(run), first = true](const std::vector<Var>& in) mutable {
            Snapshot::Replay replay(snapshot, !first);
            first = false;
            return run(in[0]);
        },
        {x}, keep);
}

template <class T>
struct Checkpointed;

// run(blocks, x) as one checkpointed region over the wrapped blocks behind `anchors` (blocks: a
// std::vector<T*>, in order). The first call is the forward, later ones recompute under the snapshot
// taken now; every call looks the blocks up again, so the model may move between forward and backward.
template <class T, class Run>
Var checkpoint_blocks(std::vector<std::shared_ptr<const Anchor<Checkpointed<T>>>> anchors, ad::KindSet keep, const Var& x,
                      Run run) {
    Snapshot snapshot;
    for (const auto& a : anchors) snapshot.add(a->get("checkpointed block").inner);
    return ad::checkpointed(
        [snapshot = std::move(snapshot), anchors = std::move(anchors), run = std::move(run),
         first = true](const std::vector<Var>& in) mutable {
            std::vector<T*> blocks;
            std::vector<nn::Mode*> modes;
            for (const auto& a : anchors) {
                T& block = a->get("checkpointed block (recomputed in backward)").inner;
                blocks.push_back(&block);
                Snapshot::find_modes(block, modes);
            }
            Snapshot::Replay replay(snapshot, std::move(modes), !first);
            first = false;
            return run(blocks, in[0]);
        },
        {x}, keep);
}

template <class T>
struct Checkpointed {
    BOOST_HANA_DEFINE_STRUCT(Checkpointed, (T, inner), (CheckpointOptions, options));
    static constexpr bool transparent = true;  // no path segment, printed as what it wraps
    static constexpr const char* name = "Checkpointed";

    Checkpointed() = default;
    Checkpointed(T inner_, CheckpointOptions options_ = {}) : inner(std::move(inner_)), options(options_) {}
    // A copy is another block: regions recorded on the original keep recomputing the original.
    Checkpointed(const Checkpointed& other) : inner(other.inner), options(other.options) {}
    // Regions recorded on `other` follow the block here.
    Checkpointed(Checkpointed&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
        : inner(std::move(other.inner)), options(other.options), anchor_(std::move(other.anchor_)) {
        if (anchor_) anchor_->at = this;
    }
    Checkpointed& operator=(const Checkpointed& other) {
        inner = other.inner;
        options = other.options;
        return *this;
    }
    Checkpointed& operator=(Checkpointed&& other) noexcept(std::is_nothrow_move_assignable_v<T>) {
        if (this != &other) {
            inner = std::move(other.inner);
            options = other.options;
            detach();  // the block regions recorded on this object ran is gone
            anchor_ = std::move(other.anchor_);
            if (anchor_) anchor_->at = this;
        }
        return *this;
    }
    ~Checkpointed() { detach(); }

    // Non-const: the recomputation sets modes on the wrapped layer. Extra arguments (masks) are
    // copied into the region.
    template <class... Extra>
    Var operator()(const Var& x, const Extra&... extra) {
        if (detail::BlockProbe* probe = detail::block_probe(); probe && ad::current().recording())
            return probe->block(options.index, probe_kind(x), x, [this, extra = std::make_tuple(extra...)](const Var& h) {
                return std::apply([&](const auto&... e) { return inner(h, e...); }, extra);
            });
        if (!options.active || !ad::current().recording()) return inner(x, extra...);
        return checkpoint_blocks<T>({anchor()}, options.keep, x,
                                    [extra = std::make_tuple(extra...)](const std::vector<T*>& blocks, const Var& h) {
                                        return std::apply([&](const auto&... e) { return (*blocks[0])(h, e...); }, extra);
                                    });
    }

    // Where this block lives now, for regions that recompute it (made on first use).
    std::shared_ptr<const Anchor<Checkpointed>> anchor() {
        if (!anchor_) anchor_ = std::make_shared<Anchor<Checkpointed>>(Anchor<Checkpointed>{this});
        return anchor_;
    }

private:
    // Blocks of one kind cost the same: the same type, parameter count and input shape.
    std::string probe_kind(const Var& x) {
        return std::string(nn::detail::layer_name<T>()) + " " + to_string(x.shape()) + ", " +
               std::to_string(tree::count_parameters(inner)) + " parameters|" + typeid(T).name();
    }

    void detach() {
        if (anchor_) anchor_->at = nullptr;
        anchor_.reset();
    }

    std::shared_ptr<Anchor<Checkpointed>> anchor_;  // not a member the tree walks: rebuilt structs start without one
};
template <class T>
Checkpointed(T, CheckpointOptions) -> Checkpointed<T>;

template <class T>
inline constexpr bool is_checkpointed = false;
template <class T>
inline constexpr bool is_checkpointed<Checkpointed<T>> = true;

// Calls blocks[0], blocks[1], … on x (with the same extra arguments), running the blocks of a
// `sqrt` segment as one checkpointed region. Errors carry "<name>.<index>" in their path.
template <class Block, class... Extra>
Var run_blocks(std::vector<Block>& blocks, const std::string& name, Var x, const Extra&... extra) {
    for (std::size_t i = 0; i < blocks.size();) {
        if constexpr (is_checkpointed<Block>) {
            const CheckpointOptions& o = blocks[i].options;
            if (o.active && o.segment > 1 && i + o.segment <= blocks.size() && ad::current().recording() &&
                !detail::block_probe()) {
                using Inner = decltype(blocks[i].inner);
                std::vector<std::shared_ptr<const Anchor<Block>>> anchors;
                for (std::size_t j = i; j < i + o.segment; ++j) anchors.push_back(blocks[j].anchor());
                x = checkpoint_blocks<Inner>(std::move(anchors), o.keep, x,
                                             [name, first = i, extra = std::make_tuple(extra...)](
                                                 const std::vector<Inner*>& segment, const Var& in) {
                                                 Var h = in;
                                                 for (std::size_t j = 0; j < segment.size(); ++j)
                                                     h = std::apply(
                                                         [&](const auto&... e) {
                                                             return nn::call(name + "." + std::to_string(first + j),
                                                                             *segment[j], h, e...);
                                                         },
                                                         extra);
                                                 return h;
                                             });
                i += o.segment;
                continue;
            }
        }
        x = nn::call(name + "." + std::to_string(i), blocks[i], x, extra...);
        ++i;
    }
    return x;
}

// Policies, as ../docs/checkpointing.md defines them.
struct Policy {
    enum class Kind { none, blocks, every, sqrt, selective, predicate, plan, budget, fit_memory };
    Kind kind = Kind::blocks;
    std::size_t k = 1;
    // predicate(path, block index): checkpoint this block?
    std::function<bool(const std::string& path, std::size_t index)> predicate;
    std::vector<CheckpointOptions> plan;  // Kind::plan: block i's options
    std::size_t budget_bytes = 0;         // Kind::budget
    ad::KindSet keep = selective_keep;    // Kind::selective: the op kinds whose outputs are kept

    static Policy of(Kind kind) {
        Policy p;
        p.kind = kind;
        return p;
    }
    static Policy none() { return of(Kind::none); }
    static Policy blocks() { return of(Kind::blocks); }
    static Policy every(std::size_t k);
    static Policy sqrt() { return of(Kind::sqrt); }
    static Policy selective() { return of(Kind::selective); }
    // selective, keeping the outputs of other op kinds than selective_keep's (an empty set: blocks).
    static Policy selective(ad::KindSet keep);
    static Policy when(std::function<bool(const std::string& path, std::size_t index)> predicate);
    // Every block's options, one per block in set_checkpointing's order (what a planner returns).
    static Policy planned(std::vector<CheckpointOptions> plan);
    // Requests that planning/plan.hpp resolves into a plan: the least recomputation whose peak
    // activation memory fits `bytes`, or fits the memory this process may still use. A model cannot
    // be checkpointed by a request itself (ValueError): plan it first.
    static Policy budget(std::size_t bytes);
    static Policy fit_memory() { return of(Kind::fit_memory); }
    bool needs_planning() const { return kind == Kind::budget || kind == Kind::fit_memory; }

    // "none", "blocks", "every:K", "sqrt", "selective", "selective:KIND+KIND…" (kinds by name:
    // attention, projection, narrowing, matmul, norm, activation, …), "budget:SIZE" (SIZE as parse_memory_size
    // reads it: 11GB, 4.5GiB), "auto" (fit_memory) and "plan:TEXT" (a plan as to_string writes it:
    // counts and letters, n plain, s selective, c checkpointed, g a segment of that many blocks
    // checkpointed as one — "plan:12n6c3g3g"); anything else throws ValueError.
    static Policy parse(const std::string& spec);
    std::string to_string() const;

    // The op kinds `selective` keeps: what costs most to redo per float kept. Fused attention (its
    // output and per-row softmax stats: C + 2H floats per token; it stores no probabilities) and
    // narrowing projections (the MLP's 4C -> C: C floats per token, 4C multiply-adds each, four times
    // any other projection's). The widening projections, norms and activations are redone. Keeping
    // every projection's output instead (9C floats per token, Megatron's choice) cut deep GPT-2's
    // peak activation memory by only 27 %; attention alone cut 74 % but cost 1.2x: docs/benchmarks.md.
    static constexpr ad::KindSet selective_keep{ad::OpKind::attention, ad::OpKind::narrowing};
};

// The options of the index-th block under a policy (segments of `sqrt` are set per sequence of
// blocks, by set_policy).
CheckpointOptions options_for(const Policy& policy, const std::string& path, std::size_t index);
// Segment lengths of `sqrt` for n consecutive blocks: ceil(√n) segments, sizes differing by at most one.
std::vector<std::size_t> sqrt_segments(std::size_t n);

// Reconfigures, in place, a model whose blocks set_checkpointing has wrapped: every block's options
// become the policy's (the type stays, so a plan chosen after the model exists needs no rebuild).
// Blocks are numbered in the order a top-down walk meets them. A plan for another number of blocks
// is a ValueError, and the model is left as it was.
template <class Model>
void set_policy(Model& model, const Policy& policy) {
    std::vector<std::string> paths;
    tree::visit(model, [&](auto& node, const std::string& path) {
        if constexpr (is_checkpointed<tree::bare<decltype(node)>>) paths.push_back(path);
    });
    if (policy.kind == Policy::Kind::plan && policy.plan.size() != paths.size())
        throw ValueError("checkpoint plan " + policy.to_string() + " is for " + std::to_string(policy.plan.size()) +
                         " blocks; the model has " + std::to_string(paths.size()));
    std::vector<CheckpointOptions> options;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        options.push_back(options_for(policy, paths[i], i));
        options.back().index = i;
    }
    std::size_t index = 0;
    tree::visit(model, [&](auto& node, const std::string&) {
        using N = tree::bare<decltype(node)>;
        if constexpr (is_checkpointed<N>) {
            node.options = options[index++];
        } else if constexpr (tree::is_vector<N>) {
            if constexpr (is_checkpointed<typename N::value_type>) {
                if (policy.kind == Policy::Kind::sqrt) {  // visited before its elements: they take these
                    std::size_t i = index;
                    for (std::size_t length : sqrt_segments(node.size())) {
                        for (std::size_t j = 0; j < length; ++j) options[i + j].segment = j == 0 ? length : 0;
                        i += length;
                    }
                }
            }
        }
    });
}

// Wraps every block of the model in Checkpointed<T> (a postwalk), configured by the policy. The
// model is moved through, never copied; its type becomes Model<…Checkpointed<Block>…> whatever
// the policy, so a policy chosen at run time (even `none`) needs no other type.
template <class Model>
auto set_checkpointing(Model&& model, const Policy& policy = Policy::blocks()) {
    static_assert(std::is_rvalue_reference_v<Model&&>, "set_checkpointing moves the model: pass it with std::move");
    if (policy.needs_planning()) (void)options_for(policy, "", 0);  // throws, before the model is moved
    if (policy.kind == Policy::Kind::plan) {
        std::size_t blocks = 0;
        tree::visit(model, [&](auto& node, const std::string&) { blocks += checkpoint_candidate<tree::bare<decltype(node)>>; });
        if (blocks != policy.plan.size())
            throw ValueError("checkpoint plan " + policy.to_string() + " is for " + std::to_string(policy.plan.size()) +
                             " blocks; the model has " + std::to_string(blocks));
    }
    auto wrapped = tree::postwalk(
        [&](auto&& node) {
            using N = tree::bare<decltype(node)>;
            if constexpr (checkpoint_candidate<N>)
                return Checkpointed<N>{std::move(node)};
            else
                return std::move(node);
        },
        std::move(model));
    set_policy(wrapped, policy);
    return wrapped;
}

// Undoes set_checkpointing: every Checkpointed<T> becomes its T again.
template <class Model>
auto unset_checkpointing(Model&& model) {
    static_assert(std::is_rvalue_reference_v<Model&&>, "unset_checkpointing moves the model: pass it with std::move");
    return tree::postwalk(
        [](auto&& node) {
            if constexpr (is_checkpointed<tree::bare<decltype(node)>>)
                return std::move(node.inner);
            else
                return std::move(node);
        },
        std::move(model));
}

}  // namespace remat
