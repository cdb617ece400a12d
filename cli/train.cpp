#include "cli/train.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <cstring>
#include <memory>

#include "cli/checkpoint_plan.hpp"
#include "cli/errors.hpp"
#include "cli/not_finite.hpp"
#include "cli/run_size.hpp"
#include "cli/flags.hpp"
#include "cli/interrupt.hpp"
#include "cli/lora.hpp"
#include "cli/model_folder.hpp"
#include "cli/numbers.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "cli/run_log.hpp"
#include "cli/training.hpp"
#include "cli/training_data.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/files.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/data/corpus.hpp"
#include "remat/data/dataset.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/dist/world.hpp"
#include "remat/hf/load.hpp"
#include "remat/train/run_folders.hpp"
#include "remat/train/schedules.hpp"
#include "remat/train/trainer.hpp"
#include "remat/text/chat_template.hpp"
#include "remat/text/wordpiece.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* run_state_file = "run_state.json";
// What may differ between a run and its resumption: none of these changes a trained bit or a
// reported loss (--checkpoint: every policy gives the same gradients).
constexpr const char* free_to_change = "--log, --log-every, --save-every, --keep, --validate-every and --checkpoint";

// How a step's gradients are added (a float sum's grouping decides its bits): micro-batch after
// micro-batch when one process or one micro-batch per rank computes them, else each rank's first.
std::string gradient_sum_grouping(std::size_t accumulate, std::size_t ranks) {
    if (accumulate == 1 || ranks == 1) return "in micro-batch order";
    return "by rank, " + std::to_string(accumulate) + " micro-batches each";
}

// "--accumulate x ranks" and "gradient sum" of a run saved when it recorded --accumulate and ranks
// apart (empty when it has neither: the run is refused as not written by this remat).
std::vector<std::pair<std::string, std::string>> saved_micro_batches(const fs::path& run_state) {
    const train::RunState saved = train::load_run_state(run_state);
    std::optional<std::size_t> accumulate;
    std::size_t ranks = 1;
    for (const auto& [name, value] : saved.arguments) {
        if (name == "--accumulate") accumulate = std::strtoull(value.c_str(), nullptr, 10);
        if (name == "ranks") ranks = std::strtoull(value.c_str(), nullptr, 10);
    }
    if (!accumulate) return {};
    return {{"--accumulate x ranks", std::to_string(*accumulate * ranks)}, {"gradient sum", gradient_sum_grouping(*accumulate, ranks)}};
}

// The settings that decide what the run computes, as they are compared on resume.
std::vector<std::pair<std::string, std::string>> computation_arguments(const TrainOptions& o, std::size_t ranks, std::size_t seq,
                                                                       std::int64_t total_steps, const RunDataset& data,
                                                                       const std::optional<RunDataset>& valid,
                                                                       std::size_t valid_count) {
    auto path = [](const fs::path& p) { return fs::absolute(p).lexically_normal().string(); };
    return {{"--data", path(o.data)},
            {"--data tokens", std::to_string(data.tokens)},  // the same path holding other data
            {"--valid", o.valid ? path(*o.valid) : ""},
            {"--valid tokens", valid ? std::to_string(valid->tokens) : ""},
            {"--format", o.format.value_or("")},
            {"--mask-prompt", o.format ? (o.mask_prompt.value_or(true) ? "true" : "false") : ""},
            {"--pack", o.pack ? "true" : "false"},
            {"--valid-windows", std::to_string(valid_count)},
            {"--seq", std::to_string(seq)},
            {"--batch", std::to_string(o.batch)},
            // A step's micro-batches, whichever ranks compute them: N ranks x 1 resume as one process x N.
            {"--accumulate x ranks", std::to_string(o.accumulate * ranks)},
            {"gradient sum", gradient_sum_grouping(o.accumulate, ranks)},
            {"--steps", std::to_string(total_steps)},
            {"--lr", shortest_text(o.lr)},
            {"--schedule", o.schedule},
            {"--warmup", std::to_string(o.warmup)},
            {"--min-lr", shortest_text(o.min_lr)},
            {"--weight-decay", shortest_text(o.weight_decay)},
            {"--clip", shortest_text(o.clip)},
            {"--seed", std::to_string(o.seed)},
            {"--precision", std::string(name(o.precision))}};
}

// A LoRA run's own settings, compared on resume like the others: the adapter's config, where it
// started (--adapter's values) and the base it adapts (its weights' fingerprint, as the base is not
// copied into checkpoints). Runs saved before LoRA had none of them.
struct LoraRun {
    adapters::LoraConfig config;
    std::uint64_t base = 0, start = 0;  // fingerprints
};
std::vector<std::pair<std::string, std::string>> lora_arguments(const TrainOptions& o, const std::optional<LoraRun>& lora) {
    if (!lora) return {{"--lora", ""}, {"--adapter", ""}, {"--adapter weights", ""}, {"base weights", ""}, {"--base-precision", "fp32"}};
    return {{"--lora", lora_text(lora->config)},
            {"--adapter", o.adapter ? fs::absolute(*o.adapter).lexically_normal().string() : ""},
            {"--adapter weights", o.adapter ? data::format_fingerprint(lora->start) : ""},
            {"base weights", data::format_fingerprint(lora->base)},
            {"--base-precision", std::string(name(o.base_precision))}};
}

// FNV-1a over the parameters' names, shapes and values, eight bytes at a time in four lanes (a
// 1.1B model's 4.4 GB in well under a second).
std::uint64_t parameters_fingerprint(const std::vector<std::pair<std::string, Param*>>& parameters) {
    constexpr std::uint64_t prime = 0x100000001b3ull;
    std::uint64_t lanes[4] = {data::raw_bytes_fingerprint, 1, 2, 3};
    auto add_bytes = [&](const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        std::size_t i = 0;
        for (; i + 32 <= n; i += 32)
            for (std::size_t l = 0; l < 4; ++l) {
                std::uint64_t word;
                std::memcpy(&word, p + i + 8 * l, 8);
                lanes[l] = (lanes[l] ^ word) * prime;
            }
        for (; i < n; ++i) lanes[0] = (lanes[0] ^ p[i]) * prime;
    };
    for (const auto& [path, p] : parameters) {
        add_bytes(path.data(), path.size() + 1);
        for (std::size_t d : p->value.shape()) add_bytes(&d, sizeof d);
        add_bytes(p->value.data(), p->value.size() * sizeof(float));
    }
    std::uint64_t h = lanes[0];
    for (std::size_t l = 1; l < 4; ++l) h = (h ^ lanes[l]) * prime;
    return h;
}

std::function<float(std::int64_t)> schedule_of(const TrainOptions& o, std::int64_t total) {
    if (o.schedule == "constant") {
        if (o.warmup > 0)
            return [s = train::LinearSchedule{.lr = o.lr, .warmup_steps = o.warmup, .total_steps = total}, lr = o.lr](
                       std::int64_t step) { return step < s.warmup_steps ? s(step) : lr; };
        return train::ConstantSchedule{.lr = o.lr};
    }
    if (o.schedule == "linear")
        return train::LinearSchedule{.lr = o.lr, .warmup_steps = o.warmup, .total_steps = total, .min_lr = o.min_lr};
    if (o.schedule == "cosine")
        return train::CosineSchedule{.lr = o.lr, .warmup_steps = o.warmup, .total_steps = total, .min_lr = o.min_lr};
    throw Failure("--schedule must be constant, linear or cosine, got \"" + o.schedule + "\"");
}

// Where the run resumes from: a checkpoint-N folder itself, or the latest complete one in OUT.
fs::path resume_folder(const fs::path& given) {
    std::error_code ec;
    if (fs::is_regular_file(given / run_state_file, ec)) return given;
    if (!fs::is_directory(given, ec)) throw Failure(given.string() + ": --resume: no such folder");
    if (auto latest = train::latest_run_folder(given)) return *latest;
    throw Failure(given.string() + ": --resume: the folder holds no complete checkpoint-N folder (nor " +
                  run_state_file + ")");
}

// What a run saves: the model, or a LoRA run's adapter alone (its base is DIR, unchanged).
std::string save_trained(models::Model& model, const std::optional<LoraRun>& lora, const ModelFolder& from, const fs::path& to) {
    check_parameters_finite(model, to.string() + " not written (a diverged update, or a checkpoint that held it)");
    if (!lora) return save_model_folder(model, from, to);
    save_adapter(model, lora->config, from, to);
    return "adapter_config.json, adapter_model.safetensors";
}

// A masked LM's windows are framed as BERT's and masked (data::BertFraming); a causal LM's are not.
std::optional<data::BertFraming> framing_of(const models::Architecture& architecture, const text::Tokenizer& tokenizer,
                                            std::size_t seq) {
    if (architecture.objective != models::Objective::masked_lm) return std::nullopt;
    const auto* wordpiece = dynamic_cast<const text::WordPieceTokenizer*>(&tokenizer);
    if (!wordpiece) throw Failure(architecture.hf_class + " trains with a WordPiece tokenizer (vocab.txt)");
    if (seq < 3) throw Failure("--seq must be at least 3 for " + architecture.hf_class + " ([CLS] + tokens + [SEP])");
    return data::BertFraming{.rule = {.special_ids = wordpiece->special_ids(),
                                      .mask_id = *wordpiece->id_of("[MASK]"),
                                      .vocab_size = wordpiece->vocab_size()},
                             .cls_id = *wordpiece->id_of("[CLS]"),
                             .sep_id = *wordpiece->id_of("[SEP]")};
}

// --format's settings, or none for token data; Failure for flags that need --format, or a masked LM.
std::optional<SupervisedSettings> supervised_settings(const TrainOptions& o, const models::Architecture& architecture) {
    if (!o.format) {
        if (o.pack || o.mask_prompt) throw Failure("--pack and --mask-prompt read supervised examples: they need --format");
        return std::nullopt;
    }
    if (architecture.objective == models::Objective::masked_lm)
        throw Failure("--format trains a causal LM on examples; " + architecture.hf_class + " is a masked LM");
    try {
        return SupervisedSettings{.format = data::parse_supervised_format(*o.format), .mask_prompt = o.mask_prompt.value_or(true), .pack = o.pack};
    } catch (const ValueError& e) {
        throw Failure("--format: " + e.message());
    }
}

std::string status(std::int64_t step, std::int64_t total, double epoch, float loss, float lr, double tokens_per_second,
                   std::size_t peak, double eta) {
    char text[200];
    std::snprintf(text, sizeof text, "step %lld/%lld  loss %.4f  epoch %.2f  lr %.3g  %.0f tokens/s  peak activation %s  ETA %s",
                  static_cast<long long>(step), static_cast<long long>(total), static_cast<double>(loss), epoch,
                  static_cast<double>(lr), tokens_per_second, readable_memory_size(peak).c_str(), format_duration(eta).c_str());
    return text;
}

int train_in(const dist::World& world, const TrainOptions& o) {
    if (o.steps && o.epochs) throw Failure("give --steps or --epochs, not both");
    if (o.lora && o.adapter) throw Failure("give --lora (a new adapter) or --adapter (one to go on training), not both");
    const bool lora = o.lora || o.adapter;
    if (o.base_precision != Precision::fp32 && !lora)
        throw Failure("--base-precision bf16 holds a frozen base: it needs --lora or --adapter");
    (void)schedule_of(o, 1);  // an unknown --schedule fails here, before any work
    if (o.min_lr > o.lr) throw Failure("--min-lr " + shortest_text(o.min_lr) + " is above --lr " + shortest_text(o.lr));
    const Policy requested = parse_policy(o.checkpoint);
    const ModelFolder folder = trainable_folder(o.dir);
    const std::optional<adapters::LoraConfig> lora_flag =
        o.lora ? std::optional(parse_lora(*o.lora, *folder.architecture)) : std::nullopt;
    const models::Summary config = folder.architecture->summary(folder.config_text);
    const std::size_t seq = window_length(o.seq, config.sizes.n_positions);
    const auto batch = static_cast<std::size_t>(o.batch), accumulate = static_cast<std::size_t>(o.accumulate);
    check_run_fits("--batch " + std::to_string(batch) + " --seq " + std::to_string(seq), checkpoint_weight_bytes(folder.dir), batch,
                   seq, config.sizes.vocab_size, {.weight_copies = lora ? 1u : 4u, .logit_copies = 2});
    const OutputFolder save_folder = o.save && world.is_root() ? prepare_output_folder(*o.save) : OutputFolder();
    if (o.log) {
        Reading reading = model_folder_files(o.dir);
        reading.push_back(o.data);
        if (o.valid) reading.push_back(*o.valid);
        check_output_file("--log", *o.log, reading);
    }
    const std::optional<fs::path> resumed = o.resume ? std::optional(resume_folder(*o.resume)) : std::nullopt;

    text::FolderTokenizer tokenizer = tokenizer_of(folder, config.sizes.vocab_size);
    const std::optional<SupervisedSettings> supervised = supervised_settings(o, *folder.architecture);
    std::optional<RunDataset> data_set, valid;
    if (supervised) {
        std::optional<text::ChatTemplate> chat;
        if (supervised->format == data::SupervisedFormat::chat) {
            try {
                chat.emplace(text::ChatTemplate::from_folder(folder.dir));
            } catch (const Error& e) {
                throw Failure("--format chat: " + e.message());
            }
        }
        const text::ChatTemplate* renders = chat ? &*chat : nullptr;
        data_set.emplace(supervised_examples(o.data, *tokenizer.tokenizer, renders, *supervised, seq));
        if (o.valid) valid.emplace(supervised_examples(*o.valid, *tokenizer.tokenizer, renders, *supervised, seq));
    } else {
        const std::optional<data::BertFraming> framing = framing_of(*folder.architecture, *tokenizer.tokenizer, seq);
        const TrainingTokens tokens(folder.dir, *tokenizer.tokenizer);
        data_set.emplace(windows_of(tokens, o.data, seq, framing, tokenizer.tokenizer->describe()));
        if (o.valid) valid.emplace(windows_of(tokens, *o.valid, seq, framing, tokenizer.tokenizer->describe()));
    }
    const data::Dataset& examples = *data_set->examples;
    const std::string unit = data_set->unit.substr(0, data_set->unit.find(' '));  // "windows", "examples", "rows"
    const std::size_t valid_count =
        valid ? std::min<std::size_t>(valid->examples->size(), static_cast<std::size_t>(o.valid_windows.value_or(INT64_MAX))) : 0;

    // Data parallel: N ranks each compute `accumulate` micro-batches of every step (rank r the r-th
    // block of them), as one process with --accumulate N·accumulate would compute them all.
    const std::size_t ranks = world.size(), per_step = batch * accumulate * ranks;
    const std::size_t count = examples.size();
    if (o.epochs && static_cast<std::uint64_t>(*o.epochs) > std::numeric_limits<std::uint64_t>::max() / 2 / count)
        throw Failure("--epochs " + std::to_string(*o.epochs) + " over " + std::to_string(count) + " " + unit +
                      " is more steps than a run can count");
    const std::int64_t total =
        o.steps ? *o.steps : static_cast<std::int64_t>(static_cast<std::size_t>(o.epochs.value_or(1)) * count / per_step);
    if (total < 1)
        throw Failure(examples.name() + ": " + std::to_string(count) + " " + data_set->unit + (supervised && !o.pack ? "" : " tokens") +
                      " make less than one step of " + std::to_string(per_step) + " " + unit + " (--batch x --accumulate" +
                      (ranks > 1 ? std::string(" x ranks") : "") + ") in " + std::to_string(o.epochs.value_or(1)) +
                      " epoch(s); give more data, more --epochs, or --steps");

    // The model: the checkpoint's weights win over the folder's; a LoRA run's checkpoints hold the
    // adapter alone, its base is always DIR.
    auto dropout = std::make_shared<Generator>(o.seed);
    std::error_code ec;
    if (resumed && lora != fs::exists(*resumed / "adapter_config.json", ec))
        throw Failure(resumed->string() + (lora ? ": holds no LoRA adapter (adapter_config.json): a full fine-tuning run resumes without --lora or --adapter"
                                                : ": holds a LoRA adapter: resume it with the run's --lora or --adapter"));
    const ModelFolder weights = resumed && !lora ? inspect(*resumed) : folder;
    if (weights.architecture != folder.architecture)
        throw Failure(resumed->string() + ": holds a " + weights.architecture->hf_class + ", " + o.dir.string() + " a " +
                      folder.architecture->hf_class);
    std::unique_ptr<models::Model> model = load_model(weights, requested, dropout);
    std::optional<LoraRun> lora_run;
    if (lora) {
        lora_run.emplace();
        lora_run->base = parameters_fingerprint(model->named_parameters());  // before the adapters: the base alone
        if (o.adapter) {
            lora_run->config = attach_adapter(*model, *o.adapter, dropout).config;
            lora_run->start = parameters_fingerprint(model->named_parameters());
        } else {
            lora_run->config = *lora_flag;
            Generator init(o.seed);  // A as PEFT draws it, from the run's seed
            try {
                model->set_lora(lora_run->config, init, dropout);
            } catch (const ValueError& e) {  // targets that match no layer
                std::string message = e.message();
                if (message.starts_with("set_lora: ")) message.erase(0, 10);
                throw Failure("--lora: " + message);
            }
        }
    }

    Progress progress(stdout, static_cast<std::size_t>(total),
                      static_cast<std::size_t>(o.log_every.value_or(std::max<std::int64_t>(1, total / 20))));
    std::optional<RunLog> log;
    double elapsed = 0;  // the steps so far, their data included
    std::int64_t first_step = 0;
    std::uint64_t first_tokens = 0;
    train::Trainer trainer(*model, examples, {
        .steps = total,
        .batch = batch,
        .accumulate = accumulate,
        .adamw = {.lr = o.lr, .weight_decay = o.weight_decay},
        .schedule = schedule_of(o, total),
        .clip = o.clip,
        .seed = o.seed,
        .dropout = dropout,
        .precision = o.precision,
        .valid = valid ? valid->examples.get() : nullptr,
        .valid_examples = valid_count,
        .validate_every = o.validate_every,
        .save = o.save,
        .save_every = o.save_every,
        .keep = static_cast<std::size_t>(o.keep),
        .save_model = [&](const fs::path& partial) { save_trained(*model, lora_run, folder, partial); },
        .arguments = [&] {
            auto arguments = computation_arguments(o, ranks, seq, total, *data_set, valid, valid_count);
            for (auto& a : lora_arguments(o, lora_run)) arguments.push_back(std::move(a));
            return arguments;
        }(),
        // Runs saved before bf16, data parallelism and LoRA were fp32, one process and full fine-tuning.
        .added_arguments = [&] {
            // Runs saved before supervised examples read token data.
            std::vector<std::pair<std::string, std::string>> added = {
                {"--precision", "fp32"}, {"--format", ""}, {"--mask-prompt", ""}, {"--pack", "false"}};
            // Runs saved before a rank count could change kept --accumulate and ranks apart.
            if (resumed)
                for (auto& a : saved_micro_batches(*resumed / run_state_file)) added.push_back(std::move(a));
            for (auto& a : lora_arguments(o, std::nullopt)) added.push_back(std::move(a));
            return added;
        }(),
        .world = &world,
        .sum_during_backward = o.sum_during_backward,
        .bucket_bytes = o.bucket_bytes,
        .shard_optimizer = o.shard_optimizer,
        .on_step = [&](const train::StepReport& r) {
            elapsed += r.seconds;
            const double done = static_cast<double>(r.step - first_step);
            progress.update(static_cast<std::size_t>(r.step),
                            status(r.step, total, r.epoch, r.loss, r.lr, static_cast<double>(r.tokens - first_tokens) / elapsed,
                                   r.peak_activation_bytes,
                                   elapsed / done * static_cast<double>(total - r.step)));
            if (r.valid_loss) {
                progress.finish();
                std::printf("validation at step %lld: loss %.4f, perplexity %.2f\n", static_cast<long long>(r.step),
                            *r.valid_loss, std::exp(*r.valid_loss));
            }
            if (log) log->write(r);
        },
        .stop_requested = interrupt_signal,
    });
    if (resumed) {
        try {
            trainer.resume(*resumed);
        } catch (const train::ResumeMismatch& e) {
            throw Failure(std::string(e.what()) + "; give the original run's arguments (only " + free_to_change + " may change)");
        }
    }
    if (lora && o.base_precision == Precision::bf16) model->hold_base_in_bf16();
    if (resumed && lora) adapters::load_peft(model->named_parameters(), *resumed);  // its arguments checked: the same adapter
    first_step = trainer.state().step;
    first_tokens = trainer.state().tokens;
    const Policy policy = [&] {
        if (!requested.needs_planning()) return requested;
        ad::UseBackend use(trainer.tape());  // the run's: the gradients profiling allocates are the ones training fills
        const data::Batch first = trainer.next_batch();
        std::size_t reserve = 0;  // the step's sum of micro-batch gradients
        if (accumulate > 1)
            for (Param* p : model->parameters())
                if (!p->frozen) reserve += p->value.size() * sizeof(float);
        const Autocast autocast(o.precision);
        return plan_checkpointing(*model, requested, [&] { return model->training_loss(first); }, reserve);
    }();
    if (world.is_root())
        for (const std::string& w : tokenizer.warnings) print_warning(w);  // once the inputs are known to be good
    if (o.shard_optimizer && ranks == 1 && world.is_root())
        print_warning("--shard-optimizer: this one process keeps the whole optimiser state; the state is sharded over mpirun's ranks");
    if (o.log && world.is_root()) log.emplace(*o.log, resumed ? std::optional(first_step) : std::nullopt);

    std::printf("model: %s (%s, %zu parameters), checkpointing %s\n", weights.dir.string().c_str(),
                folder.architecture->hf_class.c_str(), model->count_parameters(), policy.to_string().c_str());
    if (lora_run)
        std::printf("adapter: %s%s%s\n", lora_summary(*model, lora_run->config).c_str(),
                    o.adapter ? (", from " + o.adapter->string()).c_str() : "",
                    o.base_precision == Precision::bf16 ? "; the base's projections held in bf16" : "");
    std::printf("data: %s: %s\n", examples.name().c_str(), data_set->summary.c_str());
    if (valid)
        std::printf("validation: %s: %zu of %zu %s, %s\n", valid->examples->name().c_str(), valid_count, valid->examples->size(),
                    unit.c_str(),
                    o.validate_every ? ("every " + std::to_string(o.validate_every) + " steps and at the end").c_str()
                                     : "at the end");
    const std::string micro_batch = !supervised ? "windows of " + std::to_string(seq) + " tokens"
                                    : o.pack    ? "rows of " + std::to_string(seq) + " tokens"
                                                : "examples of at most " + std::to_string(seq) + " tokens";
    const std::string ranks_times = ranks > 1 ? std::to_string(ranks) + " ranks x " : "";
    std::printf("training: %lld steps of %s%zu x %zu %s, AdamW (lr %g, %s schedule, warmup %lld, "
                "weight decay %g), clip %g, seed %llu%s\n",
                static_cast<long long>(total), ranks_times.c_str(), accumulate, batch, micro_batch.c_str(), static_cast<double>(o.lr), o.schedule.c_str(),
                static_cast<long long>(o.warmup), static_cast<double>(o.weight_decay), static_cast<double>(o.clip),
                static_cast<unsigned long long>(o.seed), o.precision == Precision::bf16 ? ", bf16 products" : "");
    if (resumed)
        std::printf("resuming from %s: step %lld, %llu tokens seen\n", resumed->string().c_str(),
                    static_cast<long long>(first_step), static_cast<unsigned long long>(trainer.state().tokens));
    std::fflush(stdout);

    catch_interrupts();
    train::RunSummary done;
    try {
        done = trainer.run();
    } catch (const train::Diverged& e) {
        progress.finish();
        throw Failure(std::string(e.what()) +
                      (e.in_loss ? where_not_finite(*model, trainer.last_batch()) : "") + "; stopped" +
                      (o.save ? " (" + o.save->string() + " keeps only its earlier checkpoints)" : "") +
                      "; try a lower --lr or --clip");
    }
    progress.finish();

    if (const int signal = done.stopped_by) {
        const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
        if (!o.save)
            std::printf("stopped by %s after step %lld; nothing was saved (no --save), so the run cannot resume\n", name,
                        static_cast<long long>(done.last_step));
        else
            std::printf("stopped by %s after step %lld: saved %s; resume with the same arguments and --resume %s\n", name,
                        static_cast<long long>(done.last_step), done.saved->string().c_str(), o.save->string().c_str());
        return 128 + signal;
    }
    std::printf("trained %lld steps in %s (%.0f tokens/s): loss %.4f -> %.4f", static_cast<long long>(done.last_step - done.first_step),
                format_duration(done.seconds).c_str(), static_cast<double>(done.tokens) / std::max(done.seconds, 1e-9),
                static_cast<double>(done.first_loss), static_cast<double>(done.last_loss));
    if (done.valid_loss) std::printf(", validation loss %.4f (perplexity %.2f)", *done.valid_loss, std::exp(*done.valid_loss));
    std::printf(", loop overhead %.2f %%\n",
                100.0 * (done.data_seconds + done.report_seconds) / std::max(done.seconds + done.report_seconds, 1e-9));
    if (o.shard_optimizer && ranks > 1) {  // ZeRO-1's point, per rank
        std::size_t unsharded = 0, most = 0;
        std::string each;
        for (std::size_t bytes : done.optimiser_bytes) {
            unsharded += bytes;
            most = std::max(most, bytes);
            each += (each.empty() ? "" : ", ") + readable_memory_size(bytes);
        }
        std::printf("optimiser state per rank: %s (at most %.2fx unsharded, %s)\n", each.c_str(),
                    static_cast<double>(most) / static_cast<double>(std::max<std::size_t>(unsharded, 1)),
                    readable_memory_size(unsharded).c_str());
    }
    if (o.save && world.is_root()) {
        const std::string written = save_trained(*model, lora_run, folder, *o.save);
        std::printf("saved %s: %s\n", o.save->string().c_str(), written.c_str());
    }
    return exit_ok;
}
}  // namespace

int train(const TrainOptions& o) {
    const dist::World world;  // under mpirun: data parallel over its ranks (docs/distributed.md)
    if (!world.is_root()) std::freopen("/dev/null", "w", stdout);  // rank 0 reports for all
    try {
        return train_in(world, o);
    } catch (const train::RanksDiffer& e) {
        world.abort_together(e.what(), exit_failure);  // every rank found it: said once
    } catch (const std::bad_alloc&) {
        if (world.uses_mpi()) world.abort("out of memory", exit_failure);  // the other ranks would wait for this one forever
        throw;
    } catch (const std::exception& e) {
        if (world.uses_mpi()) world.abort(e.what(), exit_failure);
        throw;
    }
}

namespace {
struct TrainFlags {
    TrainOptions options;
    std::string dir, data, valid, save, resume, log, lora, adapter, format;
    bool mask_prompt = false, no_mask_prompt = false;
    std::string gradient_sum = "during-backward";
    Text bucket_size, precision, base_precision, steps, epochs, batch, seq, accumulate, validate_every, valid_windows, save_every, keep, warmup, lr, min_lr,
        weight_decay, clip, seed, log_every;
};
}  // namespace

Command add_train_command(CLI::App& remat) {
    auto f = std::make_shared<TrainFlags>();
    CLI::App* command = remat.add_subcommand(
        "train", "Train a causal or masked LM folder on a token corpus or a text: validated, resumable, saved in HF's format");
    command->add_option("DIR", f->dir, "A model folder with a language-model head; its tokenizer (GPT-2: vocab.json + merges.txt or tokenizer.json; BERT: vocab.txt) encodes text data")
        ->required()
        ->type_name("");
    command->add_option("--data", f->data, "A token file (remat encode), a folder of them, or a text file (encoded on the fly; - or /dev/stdin: text from a pipe); with --format a JSONL file of examples")
        ->required()
        ->type_name("DATA");
    command->add_option("--format", f->format,
                        "--data and --valid are JSONL examples: text ({\"text\"}), completion ({\"prompt\", \"completion\"}) or chat "
                        "({\"messages\"}, rendered by the folder's chat template); each cut to --seq tokens")
        ->type_name("FORMAT");
    command->add_flag("--mask-prompt", f->mask_prompt, "With --format: the loss on the completions / assistant turns only (the default)");
    command->add_flag("--no-mask-prompt", f->no_mask_prompt, "With --format: the loss on every token, prompts included");
    command->add_flag("--pack", f->options.pack,
                      "With --format: pack examples into rows of --seq tokens, each attending only within itself (the same "
                      "loss as padded batches, less padding)");
    command->add_option("--valid", f->valid, "Validation data (a token or text file), evaluated every --validate-every steps and at the end")
        ->type_name("DATA");
    add(command, "--validate-every", f->validate_every, "Validate every N steps (default: only at the end)", "N");
    add(command, "--valid-windows", f->valid_windows, "Validate on the first K windows of --valid (default: all)", "K");
    add(command, "--epochs", f->epochs, "Passes over the data (default: 1)", "N");
    add(command, "--steps", f->steps, "Optimiser steps of the whole run, instead of --epochs", "N");
    add(command, "--batch", f->batch, "Windows per micro-batch (default: 8)", "B");
    add(command, "--seq", f->seq, "Tokens per window (default: 128, or n_positions if smaller)", "T");
    add(command, "--accumulate", f->accumulate, "Micro-batches per optimiser step (default: 1)", "K");
    add(command, "--lr", f->lr, "Peak AdamW learning rate (default: 5e-05)", "LR");
    command->add_option("--schedule", f->options.schedule, "Learning-rate schedule after warmup: constant, linear or cosine (default: linear)")
        ->type_name("NAME");
    add(command, "--warmup", f->warmup, "Linear warmup steps (default: 0)", "N");
    add(command, "--min-lr", f->min_lr, "Where linear and cosine decay end (default: 0)", "LR");
    add(command, "--weight-decay", f->weight_decay, "AdamW decoupled weight decay, not applied to biases and norm weights (default: 0)", "WD");
    add(command, "--clip", f->clip, "Clip the global gradient norm to this; 0: no clipping (default: 1)", "NORM");
    add(command, "--seed", f->seed, "Seed of the windows' order and the dropout masks (default: 0)", "S");
    add_precision(command, f->precision, "the steps' and validation's projections and LM head");
    command->add_option("--gradient-sum", f->gradient_sum,
                        "Under mpirun: sum gradients across ranks during-backward (overlapped, in buckets) or after-backward "
                        "(the same bits; default: during-backward)")
        ->type_name("WHEN");
    add(command, "--bucket-size", f->bucket_size, "Under mpirun: how many gradients each of those sums takes, as a size (default: 4MiB)", "SIZE");
    command->add_flag("--shard-optimizer", f->options.shard_optimizer,
                      "Under mpirun: each rank keeps the AdamW state of its 1/N of the parameters and updates those only "
                      "(ZeRO-1; the same bits, and any rank count resumes its checkpoints)");
    command->add_option("--checkpoint", f->options.checkpoint,
                        "Checkpointing policy: none, blocks, every:K, sqrt, selective, selective:KINDS (e.g. attention+narrowing), budget:SIZE (the fastest plan whose "
                        "peak activation memory fits SIZE: 3GiB, 500MB), auto (fits the memory left) or plan:TEXT (default: none)")
        ->type_name("POLICY");
    command->add_option("--lora", f->lora,
                        "Train a LoRA adapter, the model frozen: r=R,alpha=A,dropout=P,targets=NAME,NAME… (or targets=all-linear: "
                        "every linear layer but the output layer, as PEFT) or regex=PATTERN, rslora=true "
                        "(default: r=8,alpha=8,dropout=0 on PEFT's default targets for the model)")
        ->type_name("SETTINGS");
    command->add_option("--adapter", f->adapter, "Go on training this LoRA adapter (HF PEFT's adapter_config.json + adapter_model.safetensors)")
        ->type_name("ADIR");
    add(command, "--base-precision", f->base_precision,
        "With --lora or --adapter: bf16 holds the frozen base's projection weights in bf16 only, half their memory, their "
        "products in bf16 (bitwise --precision bf16's); default fp32", "P");
    command->add_option("--save", f->save, "Write the trained model here (HF format, atomically; may be DIR); with --lora or --adapter the adapter alone (PEFT's format)")->type_name("OUT");
    add(command, "--save-every", f->save_every, "Also save OUT/checkpoint-STEP every N steps, to resume from", "N");
    add(command, "--keep", f->keep, "Keep only the last K checkpoint folders (default: all)", "K");
    command->add_option("--resume", f->resume, "Continue a run from OUT (its latest checkpoint) or one checkpoint-STEP folder")
        ->type_name("DIR");
    command->add_option("--log", f->log, "Append one JSON object per step to this file (remat plot draws it)")->type_name("FILE");
    add(command, "--log-every", f->log_every, "When not on a terminal, print a line every K steps (default: steps/20)", "K");
    command->footer(
        "Windows are consecutive runs of --seq tokens; each epoch visits every window once, in an order drawn\n"
        "from --seed and the epoch. A causal LM minimises the mean next-token cross-entropy; a masked LM\n"
        "([CLS] + T-2 tokens + [SEP]) HF's masked-LM loss on 15 % of the tokens, masked 80/10/10.\n"
        "A resumed run is bitwise identical to an uninterrupted one. SIGINT or SIGTERM saves and stops.\n"
        "Started by mpirun -np N: data parallel, each rank one (or --accumulate) micro-batch of every step,\n"
        "bitwise what one process with --accumulate N computes (docs/distributed.md).\n"
        "With --format, each epoch visits every example (--pack: every row) once; a micro-batch is padded on\n"
        "the right to its longest example, the loss the mean over its labelled tokens.\n"
        "\n" + trainable_lms() + "\n"
        "Example:\n"
        "  remat train tiny --data book.tok --valid book.tok.valid --epochs 2 --batch 8 --seq 128 --accumulate 2 \\\n"
        "      --lr 1e-3 --warmup 100 --schedule cosine --save out --save-every 500 --log out/log.jsonl\n"
        "  remat train chat-model --data chats.jsonl --format chat --pack --seq 512 --lora r=16,alpha=32 --save adapter");
    return {command, [f] {
                TrainOptions o = f->options;
                o.dir = f->dir;
                o.data = f->data;
                if (!f->valid.empty()) o.valid = f->valid;
                if (!f->save.empty()) o.save = f->save;
                if (!f->resume.empty()) o.resume = f->resume;
                if (!f->log.empty()) o.log = f->log;
                if (!f->lora.empty()) o.lora = f->lora;
                if (!f->adapter.empty()) o.adapter = f->adapter;
                if (!f->format.empty()) o.format = f->format;
                if (f->mask_prompt && f->no_mask_prompt) throw Failure("give --mask-prompt or --no-mask-prompt, not both");
                if (f->mask_prompt || f->no_mask_prompt) o.mask_prompt = f->mask_prompt;
                o.precision = precision_of(f->precision);
                if (f->base_precision.given()) o.base_precision = precision_of(f->base_precision, "--base-precision");
                if (f->gradient_sum != "during-backward" && f->gradient_sum != "after-backward")
                    throw Failure("--gradient-sum: expected during-backward or after-backward, got '" + f->gradient_sum + "'");
                o.sum_during_backward = f->gradient_sum == "during-backward";
                if (f->bucket_size.given()) {
                    try {
                        o.bucket_bytes = parse_memory_size(f->bucket_size.value);
                    } catch (const Error& e) {
                        throw Failure("--bucket-size: " + e.message());
                    }
                    if (o.bucket_bytes < sizeof(float)) throw Failure("--bucket-size: " + f->bucket_size.value + " holds no gradient; give at least 4B");
                }
                o.steps = count_if_given("--steps", f->steps, 1);
                o.epochs = count_if_given("--epochs", f->epochs, 1);
                if (f->batch.given()) o.batch = parse_count("--batch", f->batch.value, 1);
                o.seq = count_if_given("--seq", f->seq, 2);
                if (f->accumulate.given()) o.accumulate = parse_count("--accumulate", f->accumulate.value, 1);
                if (f->validate_every.given()) o.validate_every = parse_count("--validate-every", f->validate_every.value, 1);
                o.valid_windows = count_if_given("--valid-windows", f->valid_windows, 1);
                if (f->save_every.given()) o.save_every = parse_count("--save-every", f->save_every.value, 1);
                if (f->keep.given()) o.keep = parse_count("--keep", f->keep.value, 1);
                if (f->warmup.given()) o.warmup = parse_count("--warmup", f->warmup.value, 0);
                if (f->lr.given()) o.lr = parse_number("--lr", f->lr.value, 0, true);
                if (f->min_lr.given()) o.min_lr = parse_number("--min-lr", f->min_lr.value, 0, false);
                if (f->weight_decay.given()) o.weight_decay = parse_number("--weight-decay", f->weight_decay.value, 0, false);
                if (f->clip.given()) o.clip = parse_number("--clip", f->clip.value, 0, false);
                if (f->seed.given()) o.seed = static_cast<std::uint64_t>(parse_count("--seed", f->seed.value, 0));
                if (f->log_every.given()) o.log_every = parse_count("--log-every", f->log_every.value, 1);
                if ((f->save_every.given() || f->keep.given()) && !o.save) throw Failure("--save-every and --keep need --save");
                if (o.valid_windows && !o.valid) throw Failure("--valid-windows needs --valid");
                if (o.validate_every && !o.valid) throw Failure("--validate-every needs --valid");
                return train(o);
            }};
}

}  // namespace remat::cli
