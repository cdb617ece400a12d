#include "cli/flags.hpp"

#include "cli/errors.hpp"
#include "cli/numbers.hpp"

namespace remat::cli {

CLI::Option* add(CLI::App* app, const std::string& name, Text& text, const std::string& help, const std::string& type) {
    return app->add_option_function<std::string>(name, [&text](const std::string& v) { text.value = v, text.seen = true; }, help)->type_name(type);
}

CLI::Option* add_precision(CLI::App* app, Text& text, const std::string& what) {
    return add(app, "--precision", text,
               "fp32, or bf16: " + what + " multiply bf16 copies of their inputs on the CPU's matrix units, accumulating in fp32 "
               "(weights, gradients and optimiser state stay fp32; docs/precision.md) (default: fp32)",
               "P");
}

Precision precision_of(const Text& text, const std::string& flag) {
    if (!text.given()) return Precision::fp32;
    try {
        return parse_precision(text.value);
    } catch (const ValueError& e) {
        throw Failure(flag + ": " + e.what());
    }
}

std::optional<std::int64_t> count_if_given(const std::string& option, const Text& t, std::int64_t minimum) {
    if (!t.given()) return std::nullopt;
    return parse_count(option, t.value, minimum);
}

void TrainingFlags::add_to(CLI::App* app, const std::string& default_steps, const std::string& default_lr) {
    add(app, "--steps", steps, "Optimiser steps (default: " + default_steps + ")", "N");
    add(app, "--batch", batch, "Windows per step (default: 8)", "B");
    add(app, "--seq", seq, "Tokens per window (default: 128, or n_positions if smaller)", "T");
    add(app, "--lr", lr, "AdamW learning rate (default: " + default_lr + ")", "LR");
    add(app, "--weight-decay", weight_decay, "AdamW decoupled weight decay (default: 0)", "WD");
    add(app, "--clip", clip, "Clip the global gradient norm to this; 0: no clipping (default: 1)", "NORM");
    add(app, "--seed", seed, "Seed of the window sampling and the dropout masks (default: 0)", "S");
}

void TrainingFlags::read(std::int64_t& n_steps, std::int64_t& n_batch, std::optional<std::int64_t>& n_seq, Hyper& hyper,
                         std::uint64_t& n_seed) const {
    if (steps.given()) n_steps = parse_count("--steps", steps.value, 1);
    if (batch.given()) n_batch = parse_count("--batch", batch.value, 1);
    n_seq = count_if_given("--seq", seq, 2);
    if (lr.given()) hyper.lr = parse_number("--lr", lr.value, 0, true);
    if (weight_decay.given()) hyper.weight_decay = parse_number("--weight-decay", weight_decay.value, 0, false);
    if (clip.given()) hyper.clip = parse_number("--clip", clip.value, 0, false);
    if (seed.given()) n_seed = static_cast<std::uint64_t>(parse_count("--seed", seed.value, 0));
}

std::string architecture_lines(const std::function<bool(const models::Architecture&)>& keep) {
    std::string out;
    for (const models::Architecture* a : models::architectures()) {
        if (!keep(*a)) continue;
        const char* objective = a->objective == models::Objective::causal_lm   ? "causal LM"
                                : a->objective == models::Objective::masked_lm ? "masked LM"
                                                                               : "no head";
        out += "  " + a->model_type + "  " + a->hf_class + " (" + a->family + ", " + objective;
        if (!a->also_loads.empty()) out += "; also loads " + models::join(a->also_loads, "and");
        out += ")\n";
    }
    return out;
}

std::string all_architectures() {
    return "Architectures (model_type and HF class):\n" + architecture_lines([](const auto&) { return true; });
}

std::string causal_lms() {
    return "Architectures it trains:\n" +
           architecture_lines([](const auto& a) { return a.objective == models::Objective::causal_lm; });
}

std::string trainable_lms() {
    return "Architectures it trains:\n" +
           architecture_lines([](const auto& a) { return a.objective != models::Objective::none; });
}

}  // namespace remat::cli
