#pragma once
// What checkpointing costs, measured: each kind of block run alone on its real input under each
// option (plain, selective, checkpointed), and the rest of the step (embeddings, head, loss) with the
// blocks stepped over. planning/plan.hpp turns this into predictions and plans.
//
//   auto model = set_checkpointing(gpt2::create(config, init));         // any policy
//   planning::Profile profile = planning::profile_checkpointing(model, [&] {
//       return model.loss(model(ids), ids);                               // one step's loss
//   });
//
// Never a plain whole-model step: the blocks are measured one at a time, so profiling needs about
// one block's activations more than the model's smallest plan, whatever the budget. Profiling runs
// forward and backward passes on this thread's tape (the default backend): call it between steps,
// not between a forward and its backward. It leaves every gradient zero (as Tape::zero_grad) and
// every random generator of the model where it was; the model itself is not changed.
#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "remat/checkpoint.hpp"

namespace remat::planning {

// How a block can run.
enum class Option : std::uint8_t { plain, selective, checkpointed };
inline constexpr std::array<Option, 3> all_options{Option::plain, Option::selective, Option::checkpointed};
const char* name(Option option);

// One option's cost, in bytes above the live memory below the block (what earlier layers keep), the
// block's input counted while it is alive.
struct OptionCost {
    std::size_t forward_peak = 0;
    std::size_t retained = 0;       // kept from its forward for its backward, its output not included
    std::size_t backward_peak = 0;  // during its backward (recomputation included), its output's gradient included
    bool keeps_input = false;       // the input stays alive because the block keeps it
    double seconds = 0;             // forward and backward, the fastest of the measured rounds
};

// The blocks of one kind: the same type, parameter count and input shape.
struct BlockCost {
    std::string kind;  // "Block (4, 256, 256), 789760 parameters"
    std::size_t input_bytes = 0, output_bytes = 0;
    std::array<OptionCost, 3> options{};  // indexed by Option
    const OptionCost& operator[](Option o) const { return options[static_cast<std::size_t>(o)]; }
};

struct Profile {
    std::vector<BlockCost> costs;     // one per kind of block
    std::vector<std::size_t> blocks;  // block index (set_checkpointing's order) → its entry in costs
    std::vector<std::string> paths;   // block index → its path ("transformer.h.3"), where known
    // Bytes above the step's start: the peak before the first block (embeddings), and what is kept
    // when the first block starts (its input not included).
    std::size_t stem_peak = 0, stem_retained = 0;
    // The peak from the last block's output on (head, loss, their backward, the embeddings'
    // backward), above stem_retained plus what the blocks keep; the last block's output included.
    std::size_t head_peak = 0;
    // What the step's caller still held when the backward ended (remat run keeps the logits to write
    // them out; see ProfileOptions::release_held): alive through every block's backward besides what the
    // blocks take, and counted there. head_peak includes it where it was alive.
    std::size_t held_in_backward = 0;
    double rest_seconds = 0;       // the step without its blocks
    double profiling_seconds = 0;  // what profiling took

    const BlockCost& cost(std::size_t block) const { return costs[blocks[block]]; }
};

struct ProfileOptions {
    int rounds = 2;  // timed runs of each option after one untimed warm-up; the fastest counts
    // For a `loss` that keeps something of its pass beyond the step (its logits, say): called after each
    // pass's backward to let go of it, so that the next pass starts where a step would. What was still
    // held then becomes the profile's held_in_backward.
    std::function<void()> release_held{};
};

namespace detail {
// The measurement itself, on the model the probe finds through `loss`.
Profile profile(const std::function<Var()>& loss, const ProfileOptions& options);
}  // namespace detail

// Profiles the step `loss` computes on `model` (a model set_checkpointing has wrapped; any policy).
template <class Model>
Profile profile_checkpointing(Model& model, const std::function<Var()>& loss, const ProfileOptions& options = {}) {
    const Snapshot generators = Snapshot::of(model);
    struct Rewind {
        const Snapshot& s;
        ~Rewind() { s.rewind(); }
    } rewind{generators};
    Profile p = detail::profile(loss, options);
    tree::visit(model, [&](auto& node, const std::string& path) {
        if constexpr (is_checkpointed<tree::bare<decltype(node)>>) {
            if (node.options.index < p.paths.size()) p.paths[node.options.index] = path;
        }
    });
    return p;
}

}  // namespace remat::planning
