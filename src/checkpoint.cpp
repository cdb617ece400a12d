#include "remat/checkpoint.hpp"

#include "remat/core/memory_size.hpp"

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
    : snapshot_(s), recomputation_(recomputation), at_(std::move(modes)), precision_(precision()) {
    if (at_.size() != s.modes_.size())
        throw std::logic_error("checkpoint: the block has " + std::to_string(at_.size()) + " stateful layers now but had " +
                               std::to_string(s.modes_.size()) + " in the forward pass");
    detail::exchange_precision(s.precision_);
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
    detail::exchange_precision(precision_);
    for (std::size_t i = 0; i < modes_.size(); ++i) *at_[i] = modes_[i];
    if (recomputation_)
        for (std::size_t i = 0; i < live_.size(); ++i) snapshot_.generators_[i].first->set_state(live_[i]);
}

void Snapshot::rewind() const {
    for (const auto& [g, state] : generators_) g->set_state(state);
}

namespace detail {
BlockProbe*& block_probe() {
    thread_local BlockProbe* probe = nullptr;
    return probe;
}
}  // namespace detail

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

Policy Policy::planned(std::vector<CheckpointOptions> plan) {
    Policy p = of(Kind::plan);
    p.plan = std::move(plan);
    return p;
}

Policy Policy::budget(std::size_t bytes) {
    Policy p = of(Kind::budget);
    p.budget_bytes = bytes;
    return p;
}

namespace {
bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "12n6c3g3g": a count (1 if absent) and a letter, repeated. n plain, s selective, c checkpointed,
// g one segment of `count` blocks checkpointed as one region.
std::vector<CheckpointOptions> parse_plan(const std::string& text, const std::string& spec) {
    std::vector<CheckpointOptions> plan;
    constexpr std::size_t most = 1'000'000;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t count = 1, j = i;
        while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
        if (j > i) {
            if (j - i > 7) throw ValueError("checkpoint plan '" + spec + "': a count is too large");
            count = std::stoul(text.substr(i, j - i));
        }
        if (j == text.size() || count == 0)
            throw ValueError("checkpoint plan '" + spec + "': expected a letter n, s, c or g after a count ≥ 1 at character " +
                             std::to_string(j + 5));
        const char letter = text[j];
        CheckpointOptions o;
        switch (letter) {
            case 'n': o.active = false; break;
            case 's': o.keep = Policy::selective_keep; break;
            case 'c': break;
            case 'g': break;
            default:
                throw ValueError("checkpoint plan '" + spec + "': unknown letter '" + std::string(1, letter) +
                                 "' (n plain, s selective, c checkpointed, g a segment)");
        }
        if (plan.size() + count > most) throw ValueError("checkpoint plan '" + spec + "' has more than a million blocks");
        for (std::size_t b = 0; b < count; ++b) {
            if (letter == 'g') o.segment = b == 0 ? count : 0;
            plan.push_back(o);
        }
        i = j + 1;
    }
    if (plan.empty()) throw ValueError("checkpoint plan '" + spec + "' names no block");
    return plan;
}

std::string plan_text(const std::vector<CheckpointOptions>& plan) {
    std::string text;
    auto letter = [](const CheckpointOptions& o) { return !o.active ? 'n' : !o.keep.empty() ? 's' : 'c'; };
    for (std::size_t i = 0; i < plan.size();) {
        if (plan[i].active && plan[i].segment > 1) {
            text += std::to_string(plan[i].segment) + "g";
            i += plan[i].segment;
            continue;
        }
        std::size_t j = i + 1;
        while (j < plan.size() && letter(plan[j]) == letter(plan[i]) && !(plan[j].active && plan[j].segment > 1)) ++j;
        text += (j - i > 1 ? std::to_string(j - i) : "") + letter(plan[i]);
        i = j;
    }
    return text;
}
}  // namespace

Policy Policy::selective(ad::KindSet keep) {
    Policy p = of(Kind::selective);
    p.keep = keep;
    return p;
}

namespace {
constexpr ad::OpKind keepable[] = {ad::OpKind::attention, ad::OpKind::projection, ad::OpKind::narrowing,
                                   ad::OpKind::matmul,    ad::OpKind::softmax,    ad::OpKind::norm,
                                   ad::OpKind::activation, ad::OpKind::elementwise, ad::OpKind::embedding};
// "narrowing projection" is written "narrowing".
std::string kind_word(ad::OpKind k) { return k == ad::OpKind::narrowing ? "narrowing" : std::string(ad::name(k)); }

ad::KindSet parse_kinds(const std::string& text, const std::string& spec) {
    ad::KindSet set;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t end = std::min(text.find('+', begin), text.size());
        const std::string word = text.substr(begin, end - begin);
        bool found = false;
        for (ad::OpKind k : keepable)
            if (kind_word(k) == word) set = set | ad::KindSet{k}, found = true;
        if (!found) {
            std::string names;
            for (ad::OpKind k : keepable) names += (names.empty() ? "" : ", ") + kind_word(k);
            throw ValueError("checkpoint policy '" + spec + "': unknown op kind '" + word + "' (" + names + ")");
        }
        begin = end + 1;
    }
    return set;
}

std::string kinds_text(ad::KindSet set) {
    std::string text;
    for (ad::OpKind k : keepable) {
        if (!set.contains(k)) continue;
        if (!text.empty()) text += '+';
        text += kind_word(k);
    }
    return text;
}
}  // namespace

Policy Policy::parse(const std::string& spec) {
    if (spec.rfind("selective:", 0) == 0) return selective(parse_kinds(spec.substr(10), spec));
    if (spec == "none") return none();
    if (spec == "blocks") return blocks();
    if (spec == "sqrt") return sqrt();
    if (spec == "selective") return selective();
    if (spec == "auto") return fit_memory();
    if (spec.rfind("every:", 0) == 0) {
        const std::string k = spec.substr(6);
        if (all_digits(k) && k.size() < 10) return every(std::stoul(k));
    }
    if (spec.rfind("budget:", 0) == 0) return budget(parse_memory_size(spec.substr(7)));
    if (spec.rfind("plan:", 0) == 0) return planned(parse_plan(spec.substr(5), spec));
    throw ValueError("unknown checkpoint policy '" + spec +
                     "' (expected none, blocks, every:K, sqrt, selective, selective:KINDS, budget:SIZE, auto or plan:TEXT)");
}

std::string Policy::to_string() const {
    switch (kind) {
        case Kind::none: return "none";
        case Kind::blocks: return "blocks";
        case Kind::every: return "every:" + std::to_string(k);
        case Kind::sqrt: return "sqrt";
        case Kind::selective: return keep == selective_keep ? "selective" : "selective:" + kinds_text(keep);
        case Kind::predicate: return "predicate";
        case Kind::plan: return "plan:" + plan_text(plan);
        case Kind::budget: return "budget:" + memory_size_text(budget_bytes);
        case Kind::fit_memory: return "auto";
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
        case Policy::Kind::selective: o.keep = policy.keep; break;
        case Policy::Kind::predicate: o.active = policy.predicate(path, index); break;
        case Policy::Kind::plan:
            if (index >= policy.plan.size())
                throw ValueError("checkpoint plan " + policy.to_string() + " is for " + std::to_string(policy.plan.size()) +
                                 " blocks; the model has more");
            o = policy.plan[index];
            break;
        case Policy::Kind::budget:
        case Policy::Kind::fit_memory:
            throw ValueError("checkpoint policy " + policy.to_string() +
                             " asks for a plan: resolve it with plan_checkpointing (remat/planning/plan.hpp) first");
    }
    o.index = index;
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
