#include <doctest/doctest.h>

#include <cmath>

#include "remat/train/optimisers.hpp"
#include "remat/train/schedules.hpp"

using namespace remat;

// Expected values: HF transformers' lr_lambda formulas (optimization.py) worked by hand, times lr.
TEST_CASE("learning-rate schedules follow HuggingFace's formulas") {
    SUBCASE("constant") {
        train::ConstantSchedule s{.lr = 3e-4};
        CHECK(s(0) == 3e-4f);
        CHECK(s(12345) == 3e-4f);
    }
    SUBCASE("get_linear_schedule_with_warmup(warmup=4, total=10)") {
        train::LinearSchedule s{.lr = 1.0, .warmup_steps = 4, .total_steps = 10};
        CHECK(s(0) == 0.0f);
        CHECK(s(1) == 0.25f);
        CHECK(s(3) == 0.75f);
        CHECK(s(4) == 1.0f);                        // (10 − 4) / 6
        CHECK(s(7) == 0.5f);                        // (10 − 7) / 6
        CHECK(s(9) == static_cast<float>(1.0 / 6));
        CHECK(s(10) == 0.0f);
        CHECK(s(15) == 0.0f);                       // clamped at 0
        train::LinearSchedule no_warmup{.lr = 2e-3, .warmup_steps = 0, .total_steps = 4};
        CHECK(no_warmup(0) == 2e-3f);
        CHECK(no_warmup(1) == static_cast<float>(2e-3 * 0.75));
    }
    SUBCASE("get_cosine_schedule_with_warmup(warmup=2, total=10)") {
        train::CosineSchedule s{.lr = 1e-3, .warmup_steps = 2, .total_steps = 10};
        CHECK(s(1) == static_cast<float>(1e-3 * 0.5));
        CHECK(s(2) == 1e-3f);                       // progress 0: cos 0 = 1
        CHECK(s(4) == static_cast<float>(1e-3 * 0.5 * (1 + std::cos(M_PI * 0.25))));  // progress 2/8
        CHECK(s(6) == static_cast<float>(1e-3 * 0.5 * (1 + std::cos(M_PI * 0.5))));   // progress ½: ½·lr
        CHECK(s(6) == doctest::Approx(5e-4));
        CHECK(s(10) == 0.0f);
        train::CosineSchedule restarts{.lr = 1.0, .warmup_steps = 0, .total_steps = 8, .cycles = 1.0};
        CHECK(restarts(4) == 0.0f);                 // a full cycle: back down at half way …
        CHECK(restarts(8) == 1.0f);                 // … and up again at the end
    }
    SUBCASE("a floor: get_cosine_with_min_lr_schedule_with_warmup(warmup=2, total=10, min_lr=1e-4)") {
        train::CosineSchedule s{.lr = 1e-3, .warmup_steps = 2, .total_steps = 10, .min_lr = 1e-4};
        CHECK(s(1) == static_cast<float>(1e-3 * 0.5));  // warmup is not floored
        CHECK(s(2) == 1e-3f);
        CHECK(s(6) == static_cast<float>(1e-3 * (0.5 * (1 + std::cos(M_PI * 0.5)) * 0.9 + 0.1)));
        CHECK(s(10) == 1e-4f);
        train::LinearSchedule l{.lr = 1.0, .warmup_steps = 0, .total_steps = 4, .min_lr = 0.2};
        CHECK(l(2) == static_cast<float>(0.5 * 0.8 + 0.2));
        CHECK(l(4) == 0.2f);
        CHECK(l(9) == 0.2f);
    }
    SUBCASE("StepLR(step_size=3, gamma=0.5)") {
        train::StepSchedule s{.lr = 0.1, .step_size = 3, .gamma = 0.5};
        CHECK(s(0) == 0.1f);
        CHECK(s(2) == 0.1f);
        CHECK(s(3) == 0.05f);
        CHECK(s(8) == 0.025f);
        CHECK_THROWS_AS(train::StepSchedule{.step_size = 0}(1), ValueError);
    }
    SUBCASE("set_learning_rate uses the steps completed so far") {
        train::OptimiserState<train::SGD, int> state{train::SGD{}, {0}, 0};
        train::LinearSchedule s{.lr = 1.0, .warmup_steps = 4, .total_steps = 10};
        CHECK(train::set_learning_rate(state, s) == 0.0f);
        state.step = 2;
        CHECK(train::set_learning_rate(state, s) == 0.5f);
        CHECK(state.rule.lr == 0.5f);
    }
}
