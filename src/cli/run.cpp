#include "src/cli/run.hpp"

#include <algorithm>
#include <chrono>
#include <deque>

#include "models/bert/pretrained.hpp"
#include "models/gpt2/pretrained.hpp"
#include "remat/ad/tape.hpp"
#include "remat/layers/modes.hpp"
#include "src/cli/errors.hpp"
#include "src/cli/inputs.hpp"
#include "src/cli/model_folder.hpp"
#include "src/cli/numbers.hpp"
#include "src/cli/output.hpp"

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
template <class Model, class Forward, class Loss>
Measured measure(Model& model, Forward forward, Loss loss_of, bool has_loss, std::size_t repeats) {
    ad::Tape& tape = ad::default_tape();
    tape.reset();
    tape.clear_grads();
    Measured r;
    if (has_loss) {
        // An untimed pass allocates every parameter's gradient buffer, so that the measured passes
        // below see only activations (and the logits) above their baseline.
        Var logits = forward(model);
        tape.backward(loss_of(model, logits));
    }
    using clock = std::chrono::steady_clock;
    for (std::size_t i = 0; i < repeats; ++i) {
        r.logits.reset();
        if (has_loss) tape.zero_grad();
        memory::PeakScope scope;  // baseline: parameters, their gradients, the batch
        const auto start = clock::now();
        if (has_loss) {
            Var logits = forward(model);
            Var loss = loss_of(model, logits);
            tape.backward(loss);
            r.seconds.push_back(std::chrono::duration<double>(clock::now() - start).count());
            r.loss = loss.value().data()[0];
            r.logits = logits.shared_value();
        } else {
            ad::NoGrad no_grad;
            Var logits = forward(model);
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
template <class Model>
void write_output(const RunOptions& options, Architecture architecture, const Policy& policy, Model& model,
                  const Measured& m) {
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
        for (const auto& [path, p] : tree::named_parameters(model)) {
            const Tensor* g = tape.grad(p->value);
            if (!g) g = &unused.emplace_back(zeros(p->value.shape()));
            tensors.push_back(hf::f32("grad." + path, *g));
        }
    }
    hf::write_safetensors(options.output, tensors,
                          {{"architecture", name(architecture)},
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

void report_load(const hf::LoadReport& report) {
    for (const std::string& w : report.warnings) print_warning(w);
}

void run_gpt2(const RunOptions& options, const ModelFolder& folder, const Policy& policy) {
    const gpt2::Config config = gpt2::Config::from_file(folder.config);
    std::vector<std::string> unused;
    Batch batch = read_batch(options.input, {config.vocab_size, config.n_positions, 0}, unused);
    report_unused(options.input, unused);
    const IdTensor labels = batch.labels ? std::move(*batch.labels) : batch.input_ids;  // HF: labels = input_ids

    hf::LoadReport report;
    auto model = set_checkpointing(gpt2::from_pretrained(folder.dir, &report), policy);
    report_load(report);
    nn::testmode(model);
    const Measured m = measure(
        model, [&](auto& net) { return net(batch.input_ids, batch.attention_mask ? *batch.attention_mask : IdTensor()); },
        [&](auto& net, const Var& logits) { return net.loss(logits, labels); }, true,
        static_cast<std::size_t>(options.repeat));
    write_output(options, folder.architecture, policy, model, m);
}

void run_bert(const RunOptions& options, const ModelFolder& folder, const Policy& policy) {
    const bert::Config config = bert::Config::from_file(folder.config);
    std::vector<std::string> unused;
    Batch batch = read_batch(options.input, {config.vocab_size, config.max_position_embeddings, config.type_vocab_size},
                             unused);
    report_unused(options.input, unused);
    if (!batch.labels && options.grads)
        throw Failure(options.input.string() +
                      ": no tensor \"labels\": --grads needs a loss, and BERT's masked-LM loss needs labels");
    const bert::Inputs in{batch.input_ids, batch.token_type_ids ? *batch.token_type_ids : IdTensor(),
                          batch.attention_mask ? *batch.attention_mask : IdTensor()};
    const IdTensor labels = batch.labels ? *batch.labels : IdTensor();

    hf::LoadReport report;
    auto model = set_checkpointing(bert::from_pretrained(folder.dir, &report), policy);
    report_load(report);
    nn::testmode(model);
    const Measured m = measure(
        model, [&](auto& net) { return net(in); }, [&](auto& net, const Var& logits) { return net.loss(logits, labels); },
        batch.labels.has_value(), static_cast<std::size_t>(options.repeat));
    write_output(options, folder.architecture, policy, model, m);
}

}  // namespace

int run(const RunOptions& options) {
    const Policy policy = parse_policy(options.checkpoint);
    if (options.repeat < 1) throw Failure("--repeat must be at least 1, got " + std::to_string(options.repeat));
    check_writable(options.output);
    const ModelFolder folder = inspect(options.dir);
    switch (folder.architecture) {
        case Architecture::gpt2_lm_head: run_gpt2(options, folder, policy); break;
        case Architecture::bert_masked_lm: run_bert(options, folder, policy); break;
        case Architecture::bert_base:
            throw Failure(folder.config.string() +
                          ": BertModel has no language-model head to compute logits; remat run needs "
                          "GPT2LMHeadModel or BertForMaskedLM");
    }
    return exit_ok;
}

}  // namespace remat::cli
