#include <memory>
#include "cli/flags.hpp"
#include "cli/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "remat/ad/tape.hpp"
#include "remat/layers/modes.hpp"
#include "cli/checkpoint_plan.hpp"
#include "cli/errors.hpp"
#include "cli/not_finite.hpp"
#include "cli/run_size.hpp"
#include "cli/inputs.hpp"
#include "cli/lora.hpp"
#include "cli/model_folder.hpp"
#include "cli/numbers.hpp"
#include "cli/output.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

struct Measured {
    std::shared_ptr<const Tensor> logits;  // of the last pass
    std::optional<float> loss;
    std::vector<double> seconds;  // per pass
    std::size_t peak_activation_bytes = 0;
};

// `repeats` timed passes of forward (+ loss + backward when there is a loss) on the default tape.
// Parameter gradients accumulate on the tape, zeroed before each pass, and stay there for the caller.
Measured measure(models::Model& model, const data::Batch& in, const std::optional<IdTensor>& labels,
                 std::size_t repeats) {
    ad::Tape& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();
    Measured r;
    if (labels) {
        // An untimed pass allocates every parameter's gradient buffer, so that the measured passes
        // below see only activations (and the logits) above their baseline.
        Var logits = model.logits(in);
        tape.backward(model.loss(logits, *labels));
    }
    using clock = std::chrono::steady_clock;
    for (std::size_t i = 0; i < repeats; ++i) {
        r.logits.reset();
        if (labels) tape.zero_grad();
        memory::PeakScope scope;  // baseline: parameters, their gradients, the batch
        const auto start = clock::now();
        if (labels) {
            Var logits = model.logits(in);
            Var loss = model.loss(logits, *labels);
            tape.backward(loss);
            r.seconds.push_back(std::chrono::duration<double>(clock::now() - start).count());
            r.loss = loss.value().data()[0];
            r.logits = logits.shared_value();
        } else {
            ad::NoGrad no_grad;
            Var logits = model.logits(in);
            r.seconds.push_back(std::chrono::duration<double>(clock::now() - start).count());
            r.logits = logits.shared_value();
        }
        r.peak_activation_bytes = std::max(r.peak_activation_bytes, scope.peak_above_baseline());
    }
    return r;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Writes OUT: logits, loss, stats.*, then grad.NAME for every parameter in model order.
void write_output(const RunOptions& options, const models::Architecture& architecture, const Policy& policy,
                  models::Model& model, const Measured& m) {
    std::vector<hf::WriteTensor> tensors;
    tensors.push_back(hf::f32("logits", *m.logits));
    const Tensor loss = full(Shape{}, m.loss.value_or(0.0f));
    if (m.loss) tensors.push_back(hf::f32("loss", loss));
    const double seconds = median(m.seconds);
    const double peak = static_cast<double>(m.peak_activation_bytes);
    tensors.push_back(hf::f64_scalar("stats.seconds", seconds));
    tensors.push_back(hf::f64_scalar("stats.peak_activation_bytes", peak));
    std::deque<Tensor> unused;  // zero gradients of parameters the loss does not reach
    if (options.grads) {
        const ad::Tape& tape = ad::default_tape();
        for (const auto& [path, p] : model.named_parameters()) {
            if (options.adapter && p->frozen) continue;  // the base's: no gradient is computed
            const Tensor* g = tape.grad(p->value);
            if (!g) g = &unused.emplace_back(zeros(p->value.shape()));
            tensors.push_back(hf::f32("grad." + (options.adapter ? adapters::peft_prefix + path : path), *g));
        }
    }
    hf::write_safetensors(options.output, tensors,
                          {{"architecture", architecture.hf_class},
                           {"checkpoint", policy.to_string()},
                           {"repeat", std::to_string(options.repeat)}});
}

void report_unused(const fs::path& input, const std::vector<std::string>& unused) {
    if (unused.empty()) return;
    std::string w = input.string() + ": " + std::to_string(unused.size()) + " tensors are not inputs and are ignored:";
    const std::size_t shown = std::min<std::size_t>(unused.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) w += " " + unused[i];
    if (shown < unused.size()) w += " ...";
    print_warning(w);
}

// The classes of the table that have a head, for messages: "A, B or C".
std::string classes_with_a_head() {
    std::vector<std::string> classes;
    for (const models::Architecture* a : models::architectures())
        if (a->objective != models::Objective::none) classes.push_back(a->hf_class);
    return models::join(classes, "or");
}

}  // namespace

int run(const RunOptions& options) {
    const Policy requested = parse_policy(options.checkpoint);
    if (options.repeat < 1) throw Failure("--repeat must be at least 1, got " + std::to_string(options.repeat));
    Reading reading = model_folder_files(options.dir);
    reading.push_back(options.input);
    if (options.adapter) {
        reading.push_back(*options.adapter / "adapter_config.json");
        reading.push_back(*options.adapter / "adapter_model.safetensors");
    }
    check_output_file("--out", options.output, reading);
    const ModelFolder folder = inspect(options.dir);
    const models::Architecture& architecture = *folder.architecture;
    if (architecture.objective == models::Objective::none)
        throw Failure(folder.config.string() + ": " + architecture.hf_class +
                      " has no language-model head to compute logits; remat run needs " + classes_with_a_head());
    const models::Summary summary = architecture.summary(folder.config_text);
    std::vector<std::string> unused;
    data::Batch in = read_batch(options.input,
                                {summary.sizes.vocab_size, summary.sizes.n_positions, summary.type_vocab_size}, unused);
    report_unused(options.input, unused);
    const IdTensor& input_ids = in.id("input_ids");
    std::optional<IdTensor> labels;  // passed beside the inputs: measure() computes the loss itself
    if (auto given = in.ids.extract("labels")) labels = std::move(given.mapped());
    if (!labels && architecture.objective == models::Objective::causal_lm) labels = input_ids;  // HF: labels = input_ids
    if (!labels && options.grads)
        throw Failure(options.input.string() + ": no tensor \"labels\": --grads needs a loss, and " + architecture.family +
                      "'s masked-LM loss needs labels");
    check_run_fits(options.input.string() + ": input_ids " + to_string(input_ids.shape()), checkpoint_weight_bytes(folder.dir),
                   input_ids.shape()[0], input_ids.shape()[1], summary.sizes.vocab_size,
                   {.weight_copies = options.grads ? 2u : 1u, .logit_copies = labels ? 2u : 1u});

    auto model = load_model(folder, requested);
    if (options.adapter) attach_adapter(*model, *options.adapter);
    model->set_training(false);
    const Autocast autocast(options.precision);  // the planning's passes and the measured ones
    if (requested.needs_planning() && !labels)
        throw Failure("--checkpoint " + requested.to_string() + " plans a training step, and " + options.input.string() +
                      " has no labels for " + architecture.family + "'s loss");
    // Profiled before the measured passes: stats.* leave the planning out.
    // measure() keeps the logits through the backward, to write them out: so does the planned step.
    Var logits;
    const Policy policy = plan_checkpointing(
        *model, requested,
        [&] {
            logits = model->logits(in);
            return model->loss(logits, *labels);
        },
        0, [&] { logits = Var(); });
    const Measured m = measure(*model, in, labels, static_cast<std::size_t>(options.repeat));
    // A NaN is an error naming where it appeared, not a file of NaNs and exit code 0.
    const float* out = m.logits->data();
    if (m.loss && !std::isfinite(*m.loss))
        throw Failure("the loss is " + not_finite_kind(*m.loss) + where_not_finite(*model, in) + "; " + options.output.string() +
                      " not written");
    if (!std::all_of(out, out + m.logits->size(), [](float x) { return std::isfinite(x); }))
        throw Failure("the model's output is not finite" + where_not_finite(*model, in) + "; " + options.output.string() +
                      " not written");
    write_output(options, architecture, policy, *model, m);
    return exit_ok;
}

namespace {
struct RunFlags {
    RunOptions options;
    std::string dir, input, output, adapter;
    Text repeat, precision;
};
}  // namespace

Command add_run_command(CLI::App& remat) {
    auto f = std::make_shared<RunFlags>();
    CLI::App* command = remat.add_subcommand(
        "run", "Run one forward and backward pass (dropout off) and write logits, loss, gradients and stats");
    command->add_option("DIR", f->dir, "A model folder: config.json (" + models::join(models::model_types(), "or") + ") and model.safetensors")
        ->required()
        ->type_name("");
    command->add_option("--input,-i", f->input, "IN.safetensors: input_ids (I64, (B, T)), optional attention_mask, "
                                                "token_type_ids, labels (I64, (B, T); label -100 = ignore)")
        ->required()
        ->type_name("IN");
    command->add_option("--out,-o", f->output, "OUT.safetensors to write (atomically): logits, loss, stats.*, and grad.* with --grads")
        ->required()
        ->type_name("OUT");
    command->add_flag("--grads", f->options.grads, "Also write grad.NAME for every parameter (HF names and layout); with --adapter "
                                                   "for every adapter tensor (PEFT's names: grad.base_model.model.….lora_A.weight)");
    command->add_option("--adapter", f->adapter, "Run with this LoRA adapter (HF PEFT's adapter_config.json + adapter_model.safetensors)")
        ->type_name("ADIR");
    command->add_option("--checkpoint", f->options.checkpoint,
                        "Checkpointing policy: none, blocks, every:K, sqrt, selective, selective:KINDS (e.g. attention+narrowing), budget:SIZE (a plan whose peak "
                        "activation memory fits SIZE: 3GiB, 500MB), auto (fits the memory left) or plan:TEXT (default: none)")
        ->type_name("POLICY");
    add(command, "--repeat", f->repeat, "Timed forward+backward passes; stats.seconds is their median (default: 1)", "N");
    add_precision(command, f->precision, "the projections and the LM head");
    command->footer(
        "OUT holds logits (F32, (B, T, V)), loss (F32, ()), stats.seconds and stats.peak_activation_bytes (F64, ()),\n"
        "and with --grads grad.NAME (F32) for every parameter. A causal LM without labels uses input_ids as labels;\n"
        "a masked LM without labels writes logits and stats only.\n"
        "\n" + all_architectures() + "\n"
        "Example:\n"
        "  remat run models/" + models::model_types().front() + " --input batch.safetensors --out out.safetensors --grads --checkpoint blocks --repeat 5");
    return {command, [f] {
                RunOptions o = f->options;
                o.dir = f->dir;
                o.input = f->input;
                o.output = f->output;
                if (!f->adapter.empty()) o.adapter = f->adapter;
                if (f->repeat.given()) o.repeat = parse_count("--repeat", f->repeat.value, 1);
                o.precision = precision_of(f->precision);
                return run(o);
            }};
}

}  // namespace remat::cli
