#include "remat/generation/generate.hpp"

#include <algorithm>
#include <chrono>

#include "remat/core/error.hpp"

namespace remat::generation::detail {

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

Decoding::Decoding(const std::vector<std::vector<std::int64_t>>& prompts, const Options& options, std::size_t context_length)
    : options_(options), batch_(prompts.size()), rng_(options.seed) {
    if (prompts.empty()) throw ValueError("generate: no prompt");
    if (options.max_new_tokens == 0) throw ValueError("generate: max_new_tokens must be at least 1");
    check(options.sampling);
    std::size_t T = 0;
    for (std::size_t b = 0; b < batch_; ++b) {
        if (prompts[b].empty()) throw ValueError("generate: prompt " + std::to_string(b) + " is empty");
        T = std::max(T, prompts[b].size());
    }
    if (T > context_length)
        throw ValueError("generate: a prompt of " + std::to_string(T) + " tokens is longer than the model's context of " +
                         std::to_string(context_length));
    // The last token chosen is never fed back: T + max_new_tokens − 1 positions, as far as the context goes.
    capacity_ = std::min(context_length, T + options.max_new_tokens - 1);
    prompt_ids_ = IdTensor::from_shape({batch_, T});
    const bool padded = std::any_of(prompts.begin(), prompts.end(), [&](const auto& p) { return p.size() != T; });
    if (padded) prompt_mask_ = IdTensor::from_shape({batch_, T});
    seen_.resize(batch_);
    for (std::size_t b = 0; b < batch_; ++b) {
        const std::size_t pad = T - prompts[b].size();
        for (std::size_t t = 0; t < T; ++t) {
            prompt_ids_(b, t) = t < pad ? options.pad_id : prompts[b][t - pad];
            if (padded) prompt_mask_(b, t) = t < pad ? 0 : 1;
        }
        seen_[b].assign(prompt_ids_.data() + b * T, prompt_ids_.data() + (b + 1) * T);
    }
    fed_ = T;
    last_.assign(batch_, options.pad_id);
    result_.tokens.resize(batch_);
    result_.stopped.assign(batch_, false);
    start_ = now();
}

bool Decoding::take(const Var& logits) {
    if (logits.dim() != 2 || logits.shape()[0] != batch_)
        throw ShapeError("generate: expected next-token logits (" + std::to_string(batch_) + ", V), got " + to_string(logits.shape()));
    const std::size_t V = logits.shape()[1];
    bool running = false;
    for (std::size_t b = 0; b < batch_; ++b) {
        if (result_.stopped[b]) {
            last_[b] = options_.pad_id;
            seen_[b].push_back(options_.pad_id);
            continue;
        }
        const std::span<const float> row(logits.value().data() + b * V, V);
        const std::int64_t token = choose(row, options_.sampling, seen_[b], rng_);
        last_[b] = token;
        seen_[b].push_back(token);
        result_.tokens[b].push_back(token);
        const bool go_on = !options_.on_token || options_.on_token(b, token);
        if (!go_on || std::find(options_.stop_ids.begin(), options_.stop_ids.end(), token) != options_.stop_ids.end())
            result_.stopped[b] = true;
        else
            running = running || result_.tokens[b].size() < options_.max_new_tokens;
    }
    if (!running) return false;
    if (fed_ >= capacity_) {  // the next token would need a position past the context
        result_.context_full = true;
        return false;
    }
    ++fed_;
    return true;
}

IdTensor Decoding::next_ids() const {
    IdTensor ids = IdTensor::from_shape({batch_, 1});
    for (std::size_t b = 0; b < batch_; ++b) ids(b, 0) = last_[b];
    return ids;
}

void Decoding::prefill_done(std::size_t cache_bytes) {
    prefilled_ = now();
    result_.prefill_seconds = prefilled_ - start_;
    result_.cache_bytes = cache_bytes;
}

Result Decoding::finish() {
    result_.decode_seconds = now() - prefilled_;
    result_.decode_steps = fed_ - static_cast<std::size_t>(prompt_ids_.shape()[1]);
    return std::move(result_);
}

}  // namespace remat::generation::detail
