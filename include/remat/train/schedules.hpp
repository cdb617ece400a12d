#pragma once
// Learning-rate schedules, PyTorch / HuggingFace semantics. A schedule is a pure function of the
// step (no hidden state, unlike torch's LRScheduler objects), so a resumed run — whose
// OptimiserState carries the step — continues with exactly the rates of an uninterrupted one.
//
//   auto schedule = train::LinearSchedule{.lr = 3e-4, .warmup_steps = 100, .total_steps = 10'000};
//   for (…) {
//       train::set_learning_rate(state, schedule);   // state.rule.lr = schedule(state.step)
//       train::update(state, model, grads);
//   }
//
// schedule(k) is the rate of the update that follows k completed updates: HF's lr_lambda(k) times
// the peak rate, as torch's LambdaLR gives it when scheduler.step() follows every optimizer.step().
// The factor is computed in double, as Python does, and rounded to float once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "remat/core/error.hpp"

namespace remat::train {

// get_constant_schedule: lr at every step.
struct ConstantSchedule {
    double lr = 1e-3;
    float operator()(std::int64_t) const { return static_cast<float>(lr); }
};

namespace detail {
inline double warmup_factor(std::int64_t step, std::int64_t warmup_steps) {
    return static_cast<double>(step) / static_cast<double>(std::max<std::int64_t>(1, warmup_steps));
}
// HF's min_lr rule (get_cosine_with_min_lr_schedule_with_warmup): the decay's factor f becomes
// f·(1 − r) + r with r = min_lr / lr, so the rate ends at min_lr; left alone when min_lr is 0.
inline double with_floor(double factor, double lr, double min_lr) {
    if (min_lr == 0) return factor;
    const double r = min_lr / lr;
    return factor * (1 - r) + r;
}
}  // namespace detail

// get_linear_schedule_with_warmup: 0 → lr linearly over warmup_steps, then lr → min_lr (0 by
// default) linearly at total_steps (and min_lr after).
struct LinearSchedule {
    double lr = 1e-3;
    std::int64_t warmup_steps = 0, total_steps = 1;
    double min_lr = 0;
    float operator()(std::int64_t step) const {
        if (step < warmup_steps) return static_cast<float>(lr * detail::warmup_factor(step, warmup_steps));
        const double f = static_cast<double>(total_steps - step) /
                         static_cast<double>(std::max<std::int64_t>(1, total_steps - warmup_steps));
        return static_cast<float>(lr * detail::with_floor(std::max(0.0, f), lr, min_lr));
    }
};

// get_cosine_schedule_with_warmup: linear warmup, then lr · ½(1 + cos(π · cycles · 2 · progress));
// cycles = 0.5 decays once to 0 (or min_lr, as get_cosine_with_min_lr_schedule_with_warmup) at
// total_steps.
struct CosineSchedule {
    double lr = 1e-3;
    std::int64_t warmup_steps = 0, total_steps = 1;
    double cycles = 0.5;
    double min_lr = 0;
    float operator()(std::int64_t step) const {
        if (step < warmup_steps) return static_cast<float>(lr * detail::warmup_factor(step, warmup_steps));
        const double progress = static_cast<double>(step - warmup_steps) /
                                static_cast<double>(std::max<std::int64_t>(1, total_steps - warmup_steps));
        const double f = std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * cycles * 2.0 * progress)));
        return static_cast<float>(lr * detail::with_floor(f, lr, min_lr));
    }
};

// torch.optim.lr_scheduler.StepLR in its closed form: lr · gamma^⌊step / step_size⌋.
struct StepSchedule {
    double lr = 1e-3;
    std::int64_t step_size = 1;
    double gamma = 0.1;
    float operator()(std::int64_t step) const {
        if (step_size < 1) throw ValueError("StepSchedule: step_size must be at least 1, got " + std::to_string(step_size));
        return static_cast<float>(lr * std::pow(gamma, static_cast<double>(step / step_size)));
    }
};

// Sets the rule's rate for the next update from the steps completed so far; returns it.
template <class State, class Schedule>
float set_learning_rate(State& state, const Schedule& schedule) {
    state.rule.lr = schedule(state.step);
    return state.rule.lr;
}

}  // namespace remat::train
