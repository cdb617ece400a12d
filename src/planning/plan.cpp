#include "remat/planning/plan.hpp"

#include <algorithm>
#include <numeric>

namespace remat::planning {

namespace {

// A group of the chain: one block under an option, or a segment of `length` ≥ 2 blocks.
struct Group {
    Option option = Option::plain;
    std::size_t length = 1;
};

// What a group costs above the level below it.
struct Cost {
    std::size_t peak = 0;      // the highest it takes, forward or backward
    std::size_t retained = 0;  // what it keeps between its forward and its backward
    double seconds = 0;
};

Cost single(const Profile& p, std::size_t i, Option o) {
    const OptionCost& c = p.cost(i)[o];
    return {std::max(c.forward_peak, c.backward_peak + p.held_in_backward), c.retained, c.seconds};
}

// Segments a..b (b > a) for every a and b: the region keeps only its input h_a. Its forward runs the
// blocks unrecorded (each as checkpointed alone would, h_a held besides); in backward it records them
// all again, then backpropagates, while the incoming gradient, h_a and the recomputed output stay.
class Segments {
public:
    explicit Segments(const Profile& p) : n_(p.blocks.size()), costs_(n_ * n_) {
        for (std::size_t a = 0; a < n_; ++a) {
            const BlockCost& first = p.cost(a);
            const std::size_t h = first.input_bytes;
            const OptionCost& plain_a = first[Option::plain];
            std::size_t forward = first[Option::checkpointed].forward_peak;
            std::size_t recorded = plain_a.forward_peak;                               // recomputation, before the gradient
            std::size_t backward = plain_a.backward_peak + (plain_a.keeps_input ? 0 : h);
            std::size_t kept = h + plain_a.retained - (plain_a.keeps_input ? h : 0);  // h_a and what the blocks keep
            double seconds = first[Option::checkpointed].seconds;
            for (std::size_t b = a + 1; b < n_; ++b) {
                const BlockCost& m = p.cost(b);
                forward = std::max(forward, h + m[Option::checkpointed].forward_peak);
                recorded = std::max(recorded, kept + m[Option::plain].forward_peak);
                backward = std::max(backward, kept + m[Option::plain].backward_peak);
                kept += m[Option::plain].retained;
                seconds += m[Option::checkpointed].seconds;
                const std::size_t out = m.output_bytes;
                const std::size_t backward_phase = std::max(recorded, backward) + out + p.held_in_backward;
                costs_[a * n_ + b] = {std::max(forward, backward_phase), h, seconds};
            }
        }
    }
    const Cost& operator()(std::size_t a, std::size_t b) const { return costs_[a * n_ + b]; }

private:
    std::size_t n_;
    std::vector<Cost> costs_;
};

std::vector<Group> groups_of(const std::vector<CheckpointOptions>& options) {
    std::vector<Group> groups;
    for (std::size_t i = 0; i < options.size();) {
        const CheckpointOptions& o = options[i];
        if (o.active && o.segment > 1 && i + o.segment <= options.size()) {
            groups.push_back({Option::checkpointed, o.segment});
            i += o.segment;
            continue;
        }
        groups.push_back({!o.active ? Option::plain : o.keep.empty() ? Option::checkpointed : Option::selective, 1});
        ++i;
    }
    return groups;
}

std::vector<CheckpointOptions> options_from(const std::vector<Group>& groups) {
    std::vector<CheckpointOptions> options;
    for (const Group& g : groups)
        for (std::size_t j = 0; j < g.length; ++j) {
            CheckpointOptions o;
            o.active = g.option != Option::plain;
            if (g.option == Option::selective) o.keep = Policy::selective_keep;
            if (g.length > 1) o.segment = j == 0 ? g.length : 0;
            o.index = options.size();
            options.push_back(o);
        }
    return options;
}

Prediction predict_groups(const Profile& p, const Segments& segments, const std::vector<Group>& groups) {
    std::size_t level = p.stem_retained, peak = p.stem_peak, i = 0;
    double seconds = p.rest_seconds;
    for (const Group& g : groups) {
        const Cost c = g.length > 1 ? segments(i, i + g.length - 1) : single(p, i, g.option);
        peak = std::max(peak, level + c.peak);
        level += c.retained;
        seconds += c.seconds;
        i += g.length;
    }
    return {std::max(peak, level + p.head_peak), seconds};
}

// A partial plan: blocks 0..i-1 decided, `level` bytes kept, `seconds` spent.
struct State {
    std::size_t level = 0;
    double seconds = 0;
    std::int64_t parent = -1;
    Group last{};
};

std::optional<std::vector<Group>> solve(const Profile& p, const Segments& segments, std::size_t budget) {
    const std::size_t n = p.blocks.size();
    if (p.stem_peak > budget) return std::nullopt;
    std::vector<State> states{{p.stem_retained, p.rest_seconds, -1, {}}};
    std::vector<std::vector<std::size_t>> fronts(n + 1);
    fronts[0] = {0};
    auto reach = [&](std::size_t from, std::size_t to, const Group& g, const Cost& c) {
        const State& s = states[from];
        if (s.level + c.peak > budget) return;
        states.push_back({s.level + c.retained, s.seconds + c.seconds, static_cast<std::int64_t>(from), g});
        fronts[to].push_back(states.size() - 1);
    };
    // Keeps the states no other beats on both memory kept and time: the cheaper in time of two with
    // the same level, and of the rest only those faster than every state keeping less.
    auto prune = [&](std::vector<std::size_t>& front) {
        std::stable_sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
            return states[a].level != states[b].level ? states[a].level < states[b].level
                                                      : states[a].seconds < states[b].seconds;
        });
        std::vector<std::size_t> kept;
        for (std::size_t s : front)
            if (kept.empty() || states[s].seconds < states[kept.back()].seconds) kept.push_back(s);
        front = std::move(kept);
    };
    for (std::size_t i = 0; i < n; ++i) {
        prune(fronts[i]);
        for (std::size_t s : fronts[i]) {
            for (Option o : all_options) reach(s, i + 1, {o, 1}, single(p, i, o));
            for (std::size_t b = i + 1; b < n; ++b) reach(s, b + 1, {Option::checkpointed, b - i + 1}, segments(i, b));
        }
    }
    std::int64_t best = -1;
    for (std::size_t s : fronts[n]) {
        if (states[s].level + p.head_peak > budget) continue;
        if (best < 0 || states[s].seconds < states[static_cast<std::size_t>(best)].seconds ||
            (states[s].seconds == states[static_cast<std::size_t>(best)].seconds &&
             states[s].level < states[static_cast<std::size_t>(best)].level))
            best = static_cast<std::int64_t>(s);
    }
    if (best < 0) return std::nullopt;
    std::vector<Group> groups;
    for (std::int64_t s = best; states[static_cast<std::size_t>(s)].parent >= 0; s = states[static_cast<std::size_t>(s)].parent)
        groups.push_back(states[static_cast<std::size_t>(s)].last);
    std::reverse(groups.begin(), groups.end());
    return groups;
}

}  // namespace

std::vector<CheckpointOptions> options_of(const Profile& profile, const Policy& policy) {
    const std::size_t n = profile.blocks.size();
    std::vector<CheckpointOptions> options;
    for (std::size_t i = 0; i < n; ++i) options.push_back(options_for(policy, i < profile.paths.size() ? profile.paths[i] : "", i));
    if (policy.kind == Policy::Kind::sqrt) {  // the profile's blocks as one sequence, as in the models remat has
        std::size_t i = 0;
        for (std::size_t length : sqrt_segments(n)) {
            for (std::size_t j = 0; j < length; ++j) options[i + j].segment = j == 0 ? length : 0;
            i += length;
        }
    }
    return options;
}

Prediction predict(const Profile& profile, const std::vector<CheckpointOptions>& options) {
    if (options.size() != profile.blocks.size())
        throw ValueError("checkpoint prediction: " + std::to_string(options.size()) + " blocks' options for a profile of " +
                         std::to_string(profile.blocks.size()) + " blocks");
    return predict_groups(profile, Segments(profile), groups_of(options));
}

Prediction predict(const Profile& profile, const Policy& policy) { return predict(profile, options_of(profile, policy)); }

std::optional<Policy> plan_checkpointing(const Profile& profile, std::size_t budget) {
    const auto groups = solve(profile, Segments(profile), budget);
    if (!groups) return std::nullopt;
    return Policy::planned(options_from(*groups));
}

std::size_t smallest_budget(const Profile& profile) {
    const Segments segments(profile);
    std::size_t low = 0, high = predict(profile, Policy::none()).peak;  // `none` fits its own peak
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (solve(profile, segments, mid))
            high = mid;
        else
            low = mid + 1;
    }
    return low;
}

std::string describe(const Profile& profile, const std::vector<CheckpointOptions>& options) {
    (void)profile;
    const std::vector<Group> groups = groups_of(options);
    std::string text;
    auto range = [](std::size_t a, std::size_t b) { return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b); };
    std::size_t i = 0;
    for (std::size_t g = 0; g < groups.size();) {
        std::size_t h = g, blocks = 0;
        const bool segment = groups[g].length > 1;
        std::vector<std::size_t> lengths;
        while (h < groups.size() && (groups[h].length > 1) == segment && (segment || groups[h].option == groups[g].option)) {
            blocks += groups[h].length;
            lengths.push_back(groups[h].length);
            ++h;
        }
        if (!text.empty()) text += ", ";
        text += (text.empty() ? (blocks > 1 ? "blocks " : "block ") : "") + range(i, i + blocks - 1);
        if (!segment) {
            text += std::string(" ") + name(groups[g].option);
        } else {
            const bool equal = std::all_of(lengths.begin(), lengths.end(), [&](std::size_t l) { return l == lengths[0]; });
            text += lengths.size() == 1 ? " as one segment"
                                        : " in " + std::to_string(lengths.size()) + " segments" +
                                              (equal ? " of " + std::to_string(lengths[0]) : "");
        }
        i += blocks;
        g = h;
    }
    return text;
}

}  // namespace remat::planning
