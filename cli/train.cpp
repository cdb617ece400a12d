#include "cli/train.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "remat/layers/modes.hpp"
#include "cli/errors.hpp"
#include "cli/flags.hpp"
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

namespace {
struct TrainFlags {
    TrainOptions options;
    std::string dir, data, save, log_every;
    TrainingFlags training;
};
}  // namespace

Command add_train_command(CLI::App& remat) {
    auto f = std::make_shared<TrainFlags>();
    CLI::App* command = remat.add_subcommand(
        "train", "Fine-tune a causal language model folder on a text file (AdamW, gradient clipping) and save it");
    command->add_option("DIR", f->dir, "A causal LM model folder; its tokenizer files (vocab.json + merges.txt or tokenizer.json) tokenise the text")
        ->required()
        ->type_name("");
    command->add_option("--data", f->data, "A UTF-8 text file to train on")->required()->type_name("TEXT");
    f->training.add_to(command, "100", "5e-05");
    command->add_option("--checkpoint", f->options.checkpoint,
                        "Checkpointing policy: none, blocks, every:K, sqrt or selective (default: none)")
        ->type_name("POLICY");
    command->add_option("--save", f->save, "Write the trained model here (HF format, atomically; may be DIR)")
        ->type_name("OUT");
    command->add_option("--log-every", f->log_every,
                        "When not on a terminal, print a line every K steps (default: steps/20)")
        ->type_name("K");
    command->footer(
        "Each step draws --batch windows of --seq consecutive tokens from the text, at offsets drawn from --seed,\n"
        "and minimises the mean next-token cross-entropy (HF's causal LM loss with labels = the window).\n"
        "On a terminal one live line shows step, loss, tokens/s, peak activation memory and ETA.\n"
        "\n" + causal_lms() + "\n"
        "Example:\n"
        "  remat train tiny --data book.txt --steps 200 --batch 8 --seq 128 --checkpoint blocks --lr 1e-3 --save out");
    return {command, [f] {
                TrainOptions o = f->options;
                o.dir = f->dir;
                o.data = f->data;
                if (!f->save.empty()) o.save = f->save;
                f->training.read(o.steps, o.batch, o.seq, o.hyper, o.seed);
                if (!f->log_every.empty()) o.log_every = parse_count("--log-every", f->log_every, 1);
                return train(o);
            }};
}

}  // namespace remat::cli
