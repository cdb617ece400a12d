#include "remat/checkpoint.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace remat {

void Snapshot::add_generator(const std::shared_ptr<Generator>& g) {
    for (const auto& [seen, state] : generators_)
        if (seen == g) return;  // shared generators are snapshotted once
    generators_.emplace_back(g, g->state());
}

namespace {
std::vector<nn::Mode*> where_added(const std::vector<std::pair<nn::Mode*, nn::Mode>>& modes) {
    std::vector<nn::Mode*> at;
    for (const auto& [mode, resolved] : modes) at.push_back(mode);
    return at;
}
}  // namespace

Snapshot::Replay::Replay(const Snapshot& s, bool recomputation) : Replay(s, where_added(s.modes_), recomputation) {}

Snapshot::Replay::Replay(const Snapshot& s, std::vector<nn::Mode*> modes, bool recomputation)
    : snapshot_(s), recomputation_(recomputation), at_(std::move(modes)) {
    if (at_.size() != s.modes_.size())
        throw std::logic_error("checkpoint: the block has " + std::to_string(at_.size()) + " stateful layers now but had " +
                               std::to_string(s.modes_.size()) + " in the forward pass");
    for (const auto& [g, state] : s.generators_) {
        live_.push_back(g->state());
        g->set_state(state);
    }
    for (std::size_t i = 0; i < at_.size(); ++i) {
        modes_.push_back(*at_[i]);
        *at_[i] = s.modes_[i].second;
    }
}

Snapshot::Replay::~Replay() {
    for (std::size_t i = 0; i < modes_.size(); ++i) *at_[i] = modes_[i];
    if (recomputation_)
        for (std::size_t i = 0; i < live_.size(); ++i) snapshot_.generators_[i].first->set_state(live_[i]);
}

Policy Policy::every(std::size_t k) {
    if (k == 0) throw ValueError("checkpoint policy every:K needs K ≥ 1");
    Policy p = of(Kind::every);
    p.k = k;
    return p;
}

Policy Policy::when(std::function<bool(const std::string&, std::size_t)> predicate) {
    Policy p = of(Kind::predicate);
    p.predicate = std::move(predicate);
    return p;
}

Policy Policy::parse(const std::string& spec) {
    if (spec == "none") return none();
    if (spec == "blocks") return blocks();
    if (spec == "sqrt") return sqrt();
    if (spec == "selective") return selective();
    if (spec.rfind("every:", 0) == 0) {
        const std::string k = spec.substr(6);
        if (!k.empty() && std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; }) && k.size() < 10)
            return every(std::stoul(k));
    }
    throw ValueError("unknown checkpoint policy '" + spec + "' (expected none, blocks, every:K, sqrt or selective)");
}

std::string Policy::to_string() const {
    switch (kind) {
        case Kind::none: return "none";
        case Kind::blocks: return "blocks";
        case Kind::every: return "every:" + std::to_string(k);
        case Kind::sqrt: return "sqrt";
        case Kind::selective: return "selective";
        case Kind::predicate: return "predicate";
    }
    return "?";
}

CheckpointOptions options_for(const Policy& policy, const std::string& path, std::size_t index) {
    CheckpointOptions o;
    switch (policy.kind) {
        case Policy::Kind::none: o.active = false; break;
        case Policy::Kind::blocks: break;
        case Policy::Kind::every: o.active = index % policy.k == 0; break;
        case Policy::Kind::sqrt: break;  // segments are assigned per sequence of blocks
        case Policy::Kind::selective: o.keep = Policy::selective_keep; break;
        case Policy::Kind::predicate: o.active = policy.predicate(path, index); break;
    }
    return o;
}

std::vector<std::size_t> sqrt_segments(std::size_t n) {
    if (n == 0) return {};
    const auto count = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    std::vector<std::size_t> lengths(count, n / count);
    for (std::size_t i = 0; i < n % count; ++i) ++lengths[i];
    return lengths;
}

}  // namespace remat
