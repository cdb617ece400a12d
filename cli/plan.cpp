#include "cli/plan.hpp"

#include <chrono>
#include <cstdio>
#include <optional>

#include "cli/checkpoint_plan.hpp"
#include "cli/errors.hpp"
#include "cli/run_size.hpp"
#include "cli/flags.hpp"
#include "cli/model_folder.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/planning/memory_limit.hpp"
#include "remat/planning/plan.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

struct PlanOptions {
    fs::path dir;
    std::int64_t batch = 8;
    std::optional<std::int64_t> seq;
    std::optional<std::size_t> budget;
    std::int64_t rounds = 2;
};

struct Row {
    std::string name;
    Policy policy;
    planning::Prediction predicted;
    std::optional<std::size_t> peak;  // measured
    std::optional<double> seconds;
};

int plan(const PlanOptions& o) {
    const ModelFolder folder = trainable_folder(o.dir);
    const models::Summary config = folder.architecture->summary(folder.config_text);
    const std::size_t seq = window_length(o.seq, config.sizes.n_positions);
    const auto batch = static_cast<std::size_t>(o.batch);
    check_run_fits("--batch " + std::to_string(batch) + " --seq " + std::to_string(seq), checkpoint_weight_bytes(folder.dir), batch,
                   seq, config.sizes.vocab_size, {.weight_copies = 2, .logit_copies = 2});
    auto model = load_model(folder, Policy::blocks());
    model->set_training(true);

    // Random ids; a masked LM predicts every 7th position (HF masks 15 %: the loss's memory is the same).
    IdTensor ids = IdTensor::from_shape({batch, seq}), labels = IdTensor::from_shape({batch, seq});
    Generator g(0);
    std::vector<std::uint32_t> bits(ids.size());
    g.fill_bits(bits.data(), bits.size());
    const bool masked = folder.architecture->objective == models::Objective::masked_lm;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids.data()[i] = static_cast<std::int64_t>(bits[i] % config.sizes.vocab_size);
        labels.data()[i] = !masked || i % 7 == 0 ? ids.data()[i] : -100;
    }
    ad::Tape& tape = ad::default_tape();
    auto loss = [&] { return model->loss(model->logits({.ids = {{"input_ids", ids}}}), labels); };
    std::printf("model: %s (%s, %zu parameters), batch %zu x %zu tokens, training mode\n", folder.dir.string().c_str(),
                folder.architecture->hf_class.c_str(), model->count_parameters(), batch, seq);
    std::fflush(stdout);
    const planning::Profile profile = model->profile_checkpointing(loss, {.rounds = static_cast<int>(o.rounds)});
    std::printf("profiled in %.1f s: %zu blocks, %zu kind%s (%s); embeddings peak %s, head peak %s\n",
                profile.profiling_seconds, profile.blocks.size(), profile.costs.size(), profile.costs.size() == 1 ? "" : "s",
                profile.costs[0].kind.c_str(), readable_memory_size(profile.stem_peak).c_str(), readable_memory_size(profile.head_peak).c_str());

    memory::release_cached();
    const std::size_t room = planning::activation_budget(planning::memory_limit(), gradients_to_come(*model));
    const std::size_t budget = o.budget.value_or(room);
    std::vector<Row> rows;
    for (const char* fixed : {"none", "blocks", "every:2", "every:3", "every:4", "sqrt", "selective"})
        rows.push_back({fixed, Policy::parse(fixed), planning::predict(profile, Policy::parse(fixed)), {}, {}});
    const std::optional<Policy> chosen = planning::plan_checkpointing(profile, budget);
    if (chosen) rows.push_back({"plan", *chosen, planning::predict(profile, *chosen), {}, {}});

    // Measured where the prediction fits the memory left: one step to settle, one timed.
    for (Row& r : rows) {
        if (r.predicted.peak > room) continue;
        model->set_policy(r.policy);
        tape.zero_grad();
        tape.backward(loss());
        tape.zero_grad();
        memory::PeakScope scope;
        const auto t0 = std::chrono::steady_clock::now();
        tape.backward(loss());
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.peak = scope.peak_above_baseline();
    }
    tape.zero_grad();
    const double none_predicted = rows[0].predicted.seconds;
    const std::optional<double> none_measured = rows[0].seconds;
    std::printf("\n%-10s %16s %7s %16s %7s\n", "policy", "predicted peak", "time×", "measured peak", "time×");
    for (const Row& r : rows) {
        std::printf("%-10s %16s %7.2f", r.name.c_str(), readable_memory_size(r.predicted.peak).c_str(), r.predicted.seconds / none_predicted);
        if (r.peak && none_measured)
            std::printf(" %16s %7.2f\n", readable_memory_size(*r.peak).c_str(), *r.seconds / *none_measured);
        else if (r.peak)
            std::printf(" %16s %7s\n", readable_memory_size(*r.peak).c_str(), "");
        else
            std::printf(" %16s\n", "(does not fit)");
    }
    const std::string what = o.budget ? "budget:" + memory_size_text(*o.budget)
                                      : "auto (" + readable_memory_size(room) + " left for activations)";
    if (chosen)
        std::printf("\nplan for %s: %s\n  %s\n", what.c_str(), chosen->to_string().c_str(),
                    planning::describe(profile, chosen->plan).c_str());
    else
        std::printf("\nno plan fits %s; the smallest budget that fits is %s\n", what.c_str(),
                    readable_memory_size(planning::smallest_budget(profile)).c_str());
    return exit_ok;
}

struct PlanFlags {
    std::string dir;
    Text batch, seq, budget, rounds;
};

}  // namespace

Command add_plan_command(CLI::App& remat) {
    auto f = std::make_shared<PlanFlags>();
    CLI::App* command = remat.add_subcommand(
        "plan", "Profile a model's training step and show each checkpointing policy's memory and time, and the plan for a budget");
    command->add_option("DIR", f->dir, "A model folder with a language-model head")->required()->type_name("");
    add(command, "--batch", f->batch, "Windows per batch (default: 8)", "B");
    add(command, "--seq", f->seq, "Tokens per window (default: 128, or n_positions if smaller)", "T");
    add(command, "--budget", f->budget, "Plan for this much activation memory: 3GiB, 500MB (default: what is left, as --checkpoint auto)", "SIZE");
    add(command, "--rounds", f->rounds, "Timed profiling runs of each option (default: 2)", "N");
    command->footer("Predictions come from a profile of each kind of block run alone; a policy is also measured (one step)\n"
                    "when its predicted peak fits the memory left. Times are relative to none.\n\n" + trainable_lms());
    return {command, [f] {
                PlanOptions o;
                o.dir = f->dir;
                if (auto b = count_if_given("--batch", f->batch, 1)) o.batch = *b;
                o.seq = count_if_given("--seq", f->seq, 1);
                if (auto r = count_if_given("--rounds", f->rounds, 1)) o.rounds = std::min<std::int64_t>(*r, 100);
                if (f->budget.given()) {
                    try {
                        o.budget = parse_memory_size(f->budget.value);
                    } catch (const Error& e) {
                        throw Failure("--budget: " + e.message());
                    }
                }
                return plan(o);
            }};
}

}  // namespace remat::cli
