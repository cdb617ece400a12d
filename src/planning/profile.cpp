#include "remat/planning/profile.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>

#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/ops/reduce.hpp"

namespace remat::planning {

const char* name(Option option) {
    switch (option) {
        case Option::plain: return "plain";
        case Option::selective: return "selective";
        case Option::checkpointed: return "checkpointed";
    }
    return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
std::size_t bytes_of(const Var& v) { return v.value().size() * sizeof(float); }

struct Seen {
    std::function<Var(const Var&)> run;   // the first block of the kind, arguments bound
    std::shared_ptr<const Tensor> input;  // its input in the warm-up pass
};

// Steps over the blocks of a forward pass: notes each one's kind and its input, runs it without
// recording (so that what follows sees a real value) and hands on an op that passes no gradient back,
// so the head, the loss and the embeddings' backward run as in a real step.
class Probe final : public remat::detail::BlockProbe {
public:
    void start() {
        first_ = true;
        block_seconds_ = 0;
        indices_.clear();
        base_ = memory::live_bytes();
        memory::reset_peak();
    }

    Var block(std::size_t index, const std::string& kind, const Var& x, std::function<Var(const Var&)> run) override {
        if (first_) {
            stem_peak_ = memory::peak_bytes() - base_;
            stem_retained_ = memory::live_bytes() - base_ - std::min(memory::live_bytes() - base_, bytes_of(x));
            first_ = false;
        }
        if (std::find(indices_.begin(), indices_.end(), index) != indices_.end())
            throw std::logic_error("checkpoint planning: two blocks of the model report index " + std::to_string(index) +
                                   " (blocks wrapped by hand? set_checkpointing numbers them)");
        indices_.push_back(index);
        auto [it, added] = kinds_.try_emplace(kind, kinds_.size());
        if (added) seen_.push_back({run, x.shared_value()});
        if (blocks_.size() <= index) blocks_.resize(index + 1, SIZE_MAX);
        blocks_[index] = it->second;
        const auto t0 = Clock::now();
        Var y;
        {
            ad::NoGrad no_grad;
            y = run(Var(x.shared_value()));
        }
        block_seconds_ += seconds_since(t0);
        Var out = ad::record(ad::OpKind::shape, y.shared_value(), {x}, [](const Tensor&, ad::Grads&) {});
        memory::reset_peak();  // from here on, the peak is the head's
        return out;
    }

    // After the pass: what the head took.
    void finish(Profile& p, double pass_seconds) {
        if (first_) throw ValueError("checkpoint planning: the step ran no block (does the model have checkpointed blocks?)");
        const std::size_t after = memory::peak_bytes() - base_;
        p.stem_peak = stem_peak_;
        p.stem_retained = stem_retained_;
        p.head_peak = after > stem_retained_ ? after - stem_retained_ : 0;
        p.rest_seconds = std::max(0.0, pass_seconds - block_seconds_);
        for (std::size_t i = 0; i < blocks_.size(); ++i)
            if (blocks_[i] == SIZE_MAX)
                throw std::logic_error("checkpoint planning: block " + std::to_string(i) + " did not run in the step");
        p.blocks = blocks_;
    }

    // Live bytes above the pass's start.
    std::size_t above_start() const { return memory::live_bytes() - std::min(memory::live_bytes(), base_); }

    const std::vector<Seen>& seen() const { return seen_; }
    const std::map<std::string, std::size_t>& kinds() const { return kinds_; }

private:
    bool first_ = true;
    std::size_t base_ = 0, stem_peak_ = 0, stem_retained_ = 0;
    double block_seconds_ = 0;
    std::vector<std::size_t> indices_, blocks_;
    std::map<std::string, std::size_t> kinds_;
    std::vector<Seen> seen_;
};

class ProbeScope {
public:
    explicit ProbeScope(Probe& p) : previous_(remat::detail::block_probe()) { remat::detail::block_probe() = &p; }
    ~ProbeScope() { remat::detail::block_probe() = previous_; }
    ProbeScope(const ProbeScope&) = delete;
    ProbeScope& operator=(const ProbeScope&) = delete;

private:
    remat::detail::BlockProbe* previous_;
};

Var run_as(Option option, const std::function<Var(const Var&)>& run, const Var& x) {
    if (option == Option::plain) return run(x);
    const ad::KindSet keep = option == Option::selective ? Policy::selective_keep : ad::KindSet{};
    return ad::checkpointed([run](const std::vector<Var>& in) { return run(in[0]); }, {x}, keep);
}

// One forward and backward of the block alone, its input a fresh copy that the caller lets go of
// once the block has it (as a model's forward does), the backward seeded by sum(output).
OptionCost measure(ad::Tape& tape, Option option, const Seen& block, std::size_t& output_bytes) {
    OptionCost c;
    const std::size_t below = memory::live_bytes();
    auto value = std::make_shared<const Tensor>(*block.input);
    const std::weak_ptr<const Tensor> watch = value;
    Var x = tape.shared_leaf(std::move(value));
    memory::reset_peak();
    const auto t0 = Clock::now();
    Var sum;
    {
        Var y = run_as(option, block.run, x);
        c.forward_peak = memory::peak_bytes() - below;
        x = Var();
        c.keeps_input = !watch.expired();
        output_bytes = bytes_of(y);
        const std::size_t live = memory::live_bytes() - below;
        c.retained = live > output_bytes ? live - output_bytes : 0;
        sum = ops::sum(y);
    }
    memory::reset_peak();
    tape.backward(sum);
    c.seconds = seconds_since(t0);
    c.backward_peak = memory::peak_bytes() - below;
    sum = Var();
    tape.zero_grad();  // drops the input's gradient; the parameters' stay allocated, zero
    return c;
}

}  // namespace

namespace detail {

Profile profile(const std::function<Var()>& loss, const ProfileOptions& options) {
    auto* tape = dynamic_cast<ad::Tape*>(&ad::current());
    if (!tape) throw ValueError("checkpoint planning measures on remat's tape; the current backend is " +
                                std::string(ad::current().name()));
    const auto start = Clock::now();
    Profile p;
    Probe probe;
    tape->reset();
    // The debug check records each checkpointed forward: it would be measured as the block's memory.
    const bool check = tape->checkpoint_check();
    tape->set_checkpoint_check(false);
    struct Restore {
        ad::Tape& t;
        bool check;
        ~Restore() { t.set_checkpoint_check(check); }
    } restore{*tape, check};
    // Twice: the first pass allocates the embeddings' and head's gradients (a real step has them
    // before it starts) and notes the blocks; the second is measured.
    for (int pass = 0; pass < 2; ++pass) {
        ad::GradMode enabled(true);
        ProbeScope scope(probe);
        probe.start();
        const auto t0 = Clock::now();
        Var l = loss();
        tape->backward(l);
        l = Var();
        if (pass == 1) {
            probe.finish(p, seconds_since(t0));
            p.held_in_backward = probe.above_start();
        }
        if (options.release_held) options.release_held();
    }
    p.costs.resize(probe.seen().size());
    for (const auto& [kind, i] : probe.kinds()) p.costs[i].kind = kind.substr(0, kind.find('|'));
    {
        ad::GradMode enabled(true);
        for (std::size_t i = 0; i < probe.seen().size(); ++i) {
            BlockCost& cost = p.costs[i];
            cost.input_bytes = probe.seen()[i].input->size() * sizeof(float);
            for (int round = 0; round <= std::max(1, options.rounds); ++round)
                for (Option o : all_options) {
                    const OptionCost c = measure(*tape, o, probe.seen()[i], cost.output_bytes);
                    OptionCost& kept = cost.options[static_cast<std::size_t>(o)];
                    if (round == 0) continue;  // warm-up: gradients allocated, kernels and caches warm
                    const double fastest = round == 1 ? c.seconds : std::min(kept.seconds, c.seconds);
                    kept = c;
                    kept.seconds = fastest;
                }
            // Recomputing never saves time: where the clock says otherwise, it measured noise (small
            // blocks). Each option costs a hair more than the one recomputing less, so that a tie goes
            // to less recomputation.
            auto& o = cost.options;
            auto at_least = [](double& t, double floor) { t = std::max(t, floor * (1 + 1e-9)); };
            at_least(o[static_cast<std::size_t>(Option::selective)].seconds, o[static_cast<std::size_t>(Option::plain)].seconds);
            at_least(o[static_cast<std::size_t>(Option::checkpointed)].seconds,
                     o[static_cast<std::size_t>(Option::selective)].seconds);
        }
    }
    tape->zero_grad();
    p.paths.resize(p.blocks.size());
    p.profiling_seconds = seconds_since(start);
    return p;
}

}  // namespace detail

}  // namespace remat::planning
