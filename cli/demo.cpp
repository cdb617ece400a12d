#include <memory>
#include "cli/flags.hpp"
#include "cli/demo.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <tuple>

#include "remat/layers/modes.hpp"
#include "cli/errors.hpp"
#include "cli/not_finite.hpp"
#include "cli/run_size.hpp"
#include "cli/model_folder.hpp"
#include "cli/progress.hpp"
#include "remat/core/memory_size.hpp"

namespace remat::cli {

namespace {

// The embedded model: the table's first causal language model, small enough to fine-tune in
// seconds, on byte-level ids.
const models::Architecture& embedded_architecture() {
    for (const models::Architecture* a : models::architectures())
        if (a->objective == models::Objective::causal_lm) return *a;
    throw Failure("the architecture table has no causal language model");
}
const models::SizeRequest embedded_sizes{.n_layer = 6, .n_embd = 128, .n_head = 4, .vocab_size = 256, .n_positions = 128};

struct Measurements {
    std::vector<double> seconds;
    std::vector<std::size_t> peaks;
    float loss = 0;

    void add(const StepResult& r) {
        seconds.push_back(r.seconds);
        peaks.push_back(r.peak_activation_bytes);
        loss = r.loss;
    }
    // The first step also allocates gradient buffers and warms caches: it is left out when there are more.
    double median_seconds() const {
        std::vector<double> s(seconds.begin() + (seconds.size() > 1), seconds.end());
        std::sort(s.begin(), s.end());
        const std::size_t n = s.size();
        return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
    std::size_t peak() const { return *std::max_element(peaks.begin() + (peaks.size() > 1), peaks.end()); }
};

// Copies a step's raw gradients (before clipping) into buffers allocated once, outside any step.
struct GradientCopy {
    std::vector<Tensor> values;
    std::vector<bool> present;

    explicit GradientCopy(models::Model& model) {
        for (Param* p : model.parameters()) values.push_back(zeros(p->shape()));
        present.assign(values.size(), false);
    }
    void take(const std::vector<Tensor*>& grads) {
        for (std::size_t i = 0; i < grads.size(); ++i) {
            present[i] = grads[i] != nullptr;
            if (grads[i]) std::copy(grads[i]->begin(), grads[i]->end(), values[i].begin());
        }
    }
    // The largest |a - b| over all elements; infinity when one side has a gradient the other lacks.
    double max_difference(const std::vector<Tensor*>& grads) const {
        double d = 0;
        for (std::size_t i = 0; i < grads.size(); ++i) {
            if (present[i] != (grads[i] != nullptr)) return INFINITY;
            if (!grads[i]) continue;
            const float* a = values[i].data();
            const float* b = grads[i]->data();
            for (std::size_t j = 0; j < values[i].size(); ++j) {
                const double diff = std::fabs(double(a[j]) - double(b[j]));
                if (std::isnan(diff) && std::memcmp(&a[j], &b[j], sizeof(float)) != 0) return INFINITY;  // NaN against anything else
                if (diff > d) d = diff;
            }
        }
        return d;
    }
};

void print_table(const Measurements& plain, const Measurements& checkpointed) {
    const double t0 = plain.median_seconds() * 1e3, t1 = checkpointed.median_seconds() * 1e3;
    const auto p0 = plain.peak(), p1 = checkpointed.peak();
    std::printf("\n%-24s %16s %16s\n", "", "plain", "checkpointed");
    std::printf("%-24s %13.1f ms %13.1f ms   %.2fx\n", "time per step", t0, t1, t1 / t0);
    std::printf("%-24s %16s %16s   %.2fx\n", "peak activation memory", readable_memory_size(p0).c_str(),
                readable_memory_size(p1).c_str(), static_cast<double>(p1) / static_cast<double>(std::max<std::size_t>(p0, 1)));
    std::printf("%-24s %16.4f %16.4f\n\n", "final loss", static_cast<double>(plain.loss),
                static_cast<double>(checkpointed.loss));
}

// Trains `make(none)` and `make(blocks)` in lockstep on the same windows; returns the exit code.
template <class Make, class Header>
int side_by_side(Make make, Header print_header, const std::vector<std::int64_t>& ids, std::size_t seq,
                 const DemoOptions& o) {
    auto plain_model = make(Policy::none());
    auto checkpointed_model = make(Policy::blocks());
    print_header(plain_model->count_parameters());
    plain_model->set_training(true);
    checkpointed_model->set_training(true);
    Trainer plain(std::move(plain_model), o.hyper, o.precision);
    Trainer checkpointed(std::move(checkpointed_model), o.hyper, o.precision);
    GradientCopy plain_grads(*plain.model);
    WindowSampler windows(ids, seq, o.seed);

    const auto steps = static_cast<std::size_t>(o.steps), batch = static_cast<std::size_t>(o.batch);
    Measurements m_plain, m_checkpointed;
    double max_difference = 0;
    Progress progress(stdout, steps, std::max<std::size_t>(1, steps / 4));
    for (std::size_t k = 1; k <= steps; ++k) {
        const IdTensor x = windows.next(batch);
        m_plain.add(plain.step(x, [&](const std::vector<Tensor*>& g) { plain_grads.take(g); }));
        m_checkpointed.add(checkpointed.step(
            x, [&](const std::vector<Tensor*>& g) { max_difference = std::max(max_difference, plain_grads.max_difference(g)); }));
        // Two NaN runs would agree on "a difference of 0": a NaN is an error, named.
        for (auto [model, m, name] : {std::tuple{&plain, &m_plain, "plain"}, {&checkpointed, &m_checkpointed, "checkpointed"}})
            if (!std::isfinite(m->loss)) {
                progress.finish();
                throw Failure("step " + std::to_string(k) + ": the " + name + " model's loss is " + not_finite_kind(m->loss) +
                              where_not_finite(*model->model, {.ids = {{"input_ids", x}}}) + "; try a lower --lr or --clip");
            }
        char status[128];
        std::snprintf(status, sizeof status, "step %zu/%zu  loss %.4f plain, %.4f checkpointed", k, steps,
                      static_cast<double>(m_plain.loss), static_cast<double>(m_checkpointed.loss));
        progress.update(k, status);
    }
    progress.finish();
    print_table(m_plain, m_checkpointed);
    std::printf("max gradient difference: %g\n", max_difference);
    std::fflush(stdout);
    if (max_difference != 0)
        throw Failure("checkpointed gradients differ from the plain model's; please report this as a bug");
    return exit_ok;
}

std::string describe(const models::Architecture& a, const models::Sizes& s, std::size_t parameters) {
    char text[200];
    std::snprintf(text, sizeof text, "%s, %zu layers, n_embd %zu, %zu heads, vocabulary %zu, %.2fM parameters",
                  a.family.c_str(), s.n_layer, s.n_embd, s.n_head, s.vocab_size, static_cast<double>(parameters) / 1e6);
    return text;
}

}  // namespace

int demo(const DemoOptions& o) {
    std::optional<ModelFolder> folder;
    const models::Architecture* architecture = &embedded_architecture();
    std::string config;
    if (o.dir) {
        folder = causal_lm_folder(*o.dir, "demo");
        architecture = folder->architecture;
        config = folder->config_text;
    } else {
        config = architecture->config_with(embedded_sizes);
    }
    const models::Summary summary = architecture->summary(config);
    const std::size_t seq = window_length(o.seq, summary.sizes.n_positions);
    // Two models, each with gradients and AdamW's moments.
    const std::size_t weights = folder ? checkpoint_weight_bytes(folder->dir) : 0;
    check_run_fits("--batch " + std::to_string(o.batch) + " --seq " + std::to_string(seq), weights,
                   static_cast<std::size_t>(o.batch), seq, summary.sizes.vocab_size, {.weight_copies = 8, .logit_copies = 2});

    const std::string text = o.data ? read_text_file(*o.data) : std::string(demo_text());
    const std::string source = o.data ? o.data->string() : "founding-texts.txt (built in)";
    text::FolderTokenizer t{std::make_unique<text::ByteTokenizer>(), {}};
    if (folder) t = tokenizer_of(*folder, summary.sizes.vocab_size);
    const std::unique_ptr<text::Tokenizer> tokenizer = std::move(t.tokenizer);
    const std::vector<std::int64_t> ids = tokenize(*tokenizer, text, source, seq);
    for (const std::string& w : t.warnings) print_warning(w);

    // Each run's dropouts draw from their own generator, seeded alike: the runs see the same masks
    // only because checkpointing replays them exactly.
    std::function<std::unique_ptr<models::Model>(const Policy&)> make;
    if (folder) {
        make = [&, first = true](const Policy& policy) mutable {
            hf::LoadReport report;
            auto m = load_model(*folder, policy, std::make_shared<Generator>(o.seed), &report);
            if (first)
                for (const std::string& w : report.warnings) print_warning(w);
            first = false;
            return m;
        };
    } else {
        make = [&](const Policy& policy) {
            Generator init(o.seed);
            return architecture->create(config, init, std::make_shared<Generator>(o.seed), policy);
        };
    }
    auto print_header = [&](std::size_t parameters) {
        std::printf("remat demo: fine-tunes a %s twice from the same seed, plainly and with every block checkpointed\n",
                    architecture->family.c_str());
        std::printf("model: %s (%s)\n", folder ? o.dir->string().c_str() : "built in, initialised from the seed",
                    describe(*architecture, summary.sizes, parameters).c_str());
        std::printf("text: %s, %zu bytes, %zu tokens (%s)\n", source.c_str(), text.size(), ids.size(),
                    tokenizer->describe().c_str());
        std::printf("training: %lld steps of %lld x %zu tokens, AdamW (lr %g), clip %g, dropout %g, seed %llu%s\n\n",
                    static_cast<long long>(o.steps), static_cast<long long>(o.batch), seq,
                    static_cast<double>(o.hyper.lr), static_cast<double>(o.hyper.clip), summary.dropout,
                    static_cast<unsigned long long>(o.seed), o.precision == Precision::bf16 ? ", bf16 products" : "");
        std::fflush(stdout);
    };
    return side_by_side(make, print_header, ids, seq, o);
}

namespace {
struct DemoFlags {
    DemoOptions options;
    std::string dir, data;
    TrainingFlags training;
    Text precision;
};
}  // namespace

Command add_demo_command(CLI::App& remat) {
    auto f = std::make_shared<DemoFlags>();
    CLI::App* command = remat.add_subcommand(
        "demo", "Fine-tune a causal LM with and without checkpointing and compare time, memory and gradients");
    command->add_option("DIR", f->dir, "A causal LM model folder (default: a small byte-level model built from the seed)")
        ->type_name("");
    command->add_option("--data", f->data, "A UTF-8 text file (default: data/founding-texts.txt, built in)")
        ->type_name("TEXT");
    f->training.add_to(command, "20", "0.001");
    add_precision(command, f->precision, "both runs' projections and LM head");
    command->footer(
        "Both runs start from the same weights and seed and see the same windows and dropout masks; the second\n"
        "wraps every block in Checkpointed (policy blocks). Prints time per step, peak activation memory and\n"
        "final loss of each, and \"max gradient difference: 0\" — the largest difference between any gradient\n"
        "of the two runs over all steps, which must be exactly 0.\n"
        "\n" + causal_lms() + "\n"
        "Examples:\n"
        "  remat demo\n"
        "  remat demo models/" + models::model_types().front() + " --steps 5 --batch 2 --seq 256");
    return {command, [f] {
                DemoOptions o = f->options;
                if (!f->dir.empty()) o.dir = f->dir;
                if (!f->data.empty()) o.data = f->data;
                f->training.read(o.steps, o.batch, o.seq, o.hyper, o.seed);
                o.precision = precision_of(f->precision);
                return demo(o);
            }};
}

}  // namespace remat::cli
