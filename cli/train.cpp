#include "cli/train.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "remat/layers/modes.hpp"
#include "cli/errors.hpp"
#include "cli/model_folder.hpp"
#include "cli/numbers.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

// The files of a model folder that describe its tokenizer, copied along when saving.
constexpr const char* tokenizer_files[] = {"vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json",
                                           "special_tokens_map.json"};

// Writes the trained model next to an unchanged copy of the original config.json (HF fields remat
// does not read survive) and the tokenizer files; every file atomically.
std::vector<std::string> save(models::Model& model, const fs::path& from, const fs::path& to) {
    std::vector<std::string> written;
    model.save(read_text_file(from / "config.json"), to);
    written = {"config.json", "model.safetensors"};
    std::error_code ec;
    const bool same_folder = fs::equivalent(from, to, ec);
    for (const char* name : tokenizer_files) {
        if (same_folder || !fs::is_regular_file(from / name, ec)) continue;
        hf::write_text_atomically(to / name, read_text_file(from / name));
        written.push_back(name);
    }
    return written;
}

std::string status(std::size_t k, std::size_t steps, float loss, double tokens_per_second, std::size_t peak,
                   double eta) {
    char text[160];
    std::snprintf(text, sizeof text, "step %zu/%zu  loss %.4f  %.0f tokens/s  peak activation %s  ETA %s", k, steps,
                  static_cast<double>(loss), tokens_per_second, format_bytes(peak).c_str(),
                  format_duration(eta).c_str());
    return text;
}

}  // namespace

int train(const TrainOptions& o) {
    const Policy policy = parse_policy(o.checkpoint);
    const ModelFolder folder = causal_lm_folder(o.dir, "train");
    const models::Summary config = folder.architecture->summary(folder.config_text);
    const std::size_t seq = window_length(o.seq, config.sizes.n_positions);
    if (o.save) prepare_output_folder(*o.save);

    const std::string text = read_text_file(o.data);
    text::FolderTokenizer tokenizer = tokenizer_of(folder, config.sizes.vocab_size);
    const std::vector<std::int64_t> ids = tokenize(*tokenizer.tokenizer, text, o.data.string(), seq);
    for (const std::string& w : tokenizer.warnings) print_warning(w);  // once the inputs are known to be good

    auto model = load_model(folder, policy, std::make_shared<Generator>(o.seed));
    model->set_training(true);
    Trainer trainer(std::move(model), o.hyper);
    WindowSampler windows(ids, seq, o.seed);

    const auto steps = static_cast<std::size_t>(o.steps), batch = static_cast<std::size_t>(o.batch);
    std::printf("model: %s (%s, %zu parameters), checkpointing %s\n", o.dir.string().c_str(),
                folder.architecture->hf_class.c_str(), trainer.model->count_parameters(), policy.to_string().c_str());
    std::printf("data: %s: %zu bytes, %zu tokens (%s)\n", o.data.string().c_str(), text.size(), ids.size(),
                tokenizer.tokenizer->describe().c_str());
    std::printf("training: %zu steps of %zu x %zu tokens, AdamW (lr %g, weight decay %g), clip %g, seed %llu\n", steps,
                batch, seq, static_cast<double>(o.hyper.lr), static_cast<double>(o.hyper.weight_decay),
                static_cast<double>(o.hyper.clip), static_cast<unsigned long long>(o.seed));
    std::fflush(stdout);

    Progress progress(stdout, steps, static_cast<std::size_t>(o.log_every.value_or(std::max<std::int64_t>(1, o.steps / 20))));
    double elapsed = 0;
    std::size_t peak = 0;
    float first_loss = 0, last_loss = 0;
    for (std::size_t k = 1; k <= steps; ++k) {
        const StepResult r = trainer.step(windows.next(batch));
        elapsed += r.seconds;
        // The first step also allocates the gradient buffers; later steps measure activations only.
        if (k == 2 || steps == 1) peak = r.peak_activation_bytes;
        if (k > 2) peak = std::max(peak, r.peak_activation_bytes);
        if (k == 1) first_loss = r.loss;
        last_loss = r.loss;
        const double tokens_per_second = static_cast<double>(k * batch * seq) / elapsed;
        progress.update(k, status(k, steps, r.loss, tokens_per_second, r.peak_activation_bytes,
                                  elapsed / static_cast<double>(k) * static_cast<double>(steps - k)));
    }
    progress.finish();
    std::printf("trained %zu steps in %s (%.0f tokens/s): loss %.4f -> %.4f, peak activation memory %s\n", steps,
                format_duration(elapsed).c_str(), static_cast<double>(steps * batch * seq) / elapsed,
                static_cast<double>(first_loss), static_cast<double>(last_loss), format_bytes(peak).c_str());
    if (o.save) {
        const std::vector<std::string> written = save(*trainer.model, o.dir, *o.save);
        std::string files;
        for (const std::string& f : written) files += (files.empty() ? "" : ", ") + f;
        std::printf("saved %s: %s\n", o.save->string().c_str(), files.c_str());
    }
    return exit_ok;
}

}  // namespace remat::cli
