// The `remat` command: init, train, demo, info and run (docs/cli.md). Every failure — usage
// mistakes included — is one "error: …" line on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <new>

#include "models/architecture.hpp"
#include "remat/core/error.hpp"
#include "cli/demo.hpp"
#include "cli/errors.hpp"
#include "cli/info.hpp"
#include "cli/init.hpp"
#include "cli/numbers.hpp"
#include "cli/run.hpp"
#include "cli/train.hpp"

using namespace remat::cli;

namespace {
constexpr const char* commands[] = {"init", "train", "demo", "info", "run"};

bool is_command(const char* arg) {
    for (const char* c : commands)
        if (std::strcmp(arg, c) == 0) return true;
    return false;
}

// Numbers are taken as text and read strictly (cli/numbers.hpp); empty means "not given".
struct Text {
    std::string value;
    bool given() const { return !value.empty(); }
};

CLI::Option* add(CLI::App* app, const std::string& name, Text& text, const std::string& help, const std::string& type) {
    return app->add_option(name, text.value, help)->type_name(type);
}

std::optional<std::int64_t> count_if_given(const std::string& option, const Text& t, std::int64_t minimum) {
    if (!t.given()) return std::nullopt;
    return parse_count(option, t.value, minimum);
}

// The flags train and demo share; defaults differ (the demo fine-tunes fast).
struct TrainingFlags {
    Text steps, batch, seq, lr, weight_decay, clip, seed;

    void add_to(CLI::App* app, const std::string& default_steps, const std::string& default_lr) {
        add(app, "--steps", steps, "Optimiser steps (default: " + default_steps + ")", "N");
        add(app, "--batch", batch, "Windows per step (default: 8)", "B");
        add(app, "--seq", seq, "Tokens per window (default: 128, or n_positions if smaller)", "T");
        add(app, "--lr", lr, "AdamW learning rate (default: " + default_lr + ")", "LR");
        add(app, "--weight-decay", weight_decay, "AdamW decoupled weight decay (default: 0)", "WD");
        add(app, "--clip", clip, "Clip the global gradient norm to this; 0: no clipping (default: 1)", "NORM");
        add(app, "--seed", seed, "Seed of the window sampling and the dropout masks (default: 0)", "S");
    }
    void read(std::int64_t& n_steps, std::int64_t& n_batch, std::optional<std::int64_t>& n_seq, Hyper& hyper,
              std::uint64_t& n_seed) const {
        if (steps.given()) n_steps = parse_count("--steps", steps.value, 1);
        if (batch.given()) n_batch = parse_count("--batch", batch.value, 1);
        n_seq = count_if_given("--seq", seq, 2);
        if (lr.given()) hyper.lr = parse_number("--lr", lr.value, 0, true);
        if (weight_decay.given()) hyper.weight_decay = parse_number("--weight-decay", weight_decay.value, 0, false);
        if (clip.given()) hyper.clip = parse_number("--clip", clip.value, 0, false);
        if (seed.given()) n_seed = static_cast<std::uint64_t>(parse_count("--seed", seed.value, 0));
    }
};

// The architectures of the table, for help texts: one line each, "  <model_type>  <HF class>
// (<family>, <objective>; also loads <classes>)", limited to those `keep` accepts.
template <class Keep>
std::string architecture_lines(Keep keep) {
    std::string out;
    for (const remat::models::Architecture* a : remat::models::architectures()) {
        if (!keep(*a)) continue;
        const char* objective = a->objective == remat::models::Objective::causal_lm   ? "causal LM"
                                : a->objective == remat::models::Objective::masked_lm ? "masked LM"
                                                                                      : "no head";
        out += "  " + a->model_type + "  " + a->hf_class + " (" + a->family + ", " + objective;
        if (!a->also_loads.empty()) out += "; also loads " + remat::models::join(a->also_loads, "and");
        out += ")\n";
    }
    return out;
}
std::string all_architectures() {
    return "Architectures (model_type and HF class):\n" + architecture_lines([](const auto&) { return true; });
}
std::string causal_lms() {
    return "Architectures it trains:\n" +
           architecture_lines([](const auto& a) { return a.objective == remat::models::Objective::causal_lm; });
}
// "<what>: <field> (<model_type>), …; default: <value> (<model_type>), …" for the index-th size.
std::string size_help(const std::string& what, std::size_t index) {
    std::string fields, defaults;
    std::vector<std::string> seen;
    for (const remat::models::Architecture* a : remat::models::architectures()) {
        if (std::find(seen.begin(), seen.end(), a->model_type) != seen.end()) continue;  // --arch takes the first
        seen.push_back(a->model_type);
        const remat::models::Sizes& d = a->default_sizes;
        const std::size_t values[] = {d.n_layer, d.n_embd, d.n_head, d.vocab_size, d.n_positions};
        fields += (fields.empty() ? "" : ", ") + a->size_fields[index] + " (" + a->model_type + ")";
        defaults += (defaults.empty() ? "" : ", ") + std::to_string(values[index]) + " (" + a->model_type + ")";
    }
    return what + ": " + fields + "; default: " + defaults;
}

int main_with_exceptions(int argc, char** argv) {
    std::vector<std::string> families;
    for (const remat::models::Architecture* a : remat::models::architectures())
        if (std::find(families.begin(), families.end(), a->family) == families.end()) families.push_back(a->family);
    const std::vector<std::string> types = remat::models::model_types();
    const std::string first_type = types.front();
    CLI::App app{"remat: " + remat::models::join(families, "and") +
                 " in C++ — create, fine-tune and inspect HuggingFace models, with exact gradient checkpointing."};
    app.name("remat");
    app.require_subcommand(0, 1);
    app.footer(
        all_architectures() +
        "\n"
        "Examples:\n"
        "  remat demo                                  # fine-tune a small model with and without checkpointing\n"
        "  remat init tiny --arch " + first_type + " --n-layer 4 --n-embd 128 --n-head 4 --vocab-size 256 --n-positions 128\n"
        "  remat train tiny --data book.txt --steps 200 --checkpoint blocks --lr 1e-3 --save tiny-trained\n"
        "  remat info models/" + first_type + "\n"
        "  remat run models/" + first_type + " --input batch.safetensors --out out.safetensors --grads --checkpoint blocks\n"
        "\n"
        "Run \"remat COMMAND --help\" for a command's options. Every failure prints one line \"error: ...\" on\n"
        "stderr and exits with code 2. See docs/cli.md.");

    // init
    InitOptions init_options;
    std::string init_dir;
    Text n_layer, n_embd, n_head, vocab_size, n_positions, init_seed;
    CLI::App* init = app.add_subcommand("init", "Write a randomly initialised model folder (HF's init) of any architecture");
    init->add_option("DIR", init_dir, "The model folder to write: config.json and model.safetensors")->required()->type_name("");
    std::string arch_help;
    for (const std::string& t : types)
        arch_help += (arch_help.empty() ? "" : ", ") + t + " (" + remat::cli::architecture_for_init(t).hf_class + ")";
    init->add_option("--arch", init_options.arch, "The model_type: " + arch_help)
        ->required()
        ->type_name("ARCH");
    add(init, "--n-layer", n_layer, size_help("Blocks", 0), "N");
    add(init, "--n-embd", n_embd, size_help("Hidden size", 1), "C");
    add(init, "--n-head", n_head, size_help("Attention heads, dividing --n-embd", 2), "H");
    add(init, "--vocab-size", vocab_size, size_help("Vocabulary size", 3), "V");
    add(init, "--n-positions", n_positions, size_help("Longest sequence", 4), "T");
    add(init, "--seed", init_seed, "Seed of the initialisation: the same seed and sizes give the same files (default: 0)",
        "S");
    init->add_flag("--force", init_options.force, "Overwrite a model already in DIR");
    init->footer(
        "Weights are drawn as HuggingFace initialises each architecture (its _init_weights), from --seed. Unset\n"
        "sizes keep HF's defaults; each size sets the architecture's own config field.\n"
        "\nArchitectures it writes (--arch):\n" + architecture_lines([&](const auto& a) { return &a == &remat::cli::architecture_for_init(a.model_type); }) +
        "\n"
        "Example:\n"
        "  remat init tiny --arch " + first_type + " --n-layer 4 --n-embd 128 --n-head 4 --vocab-size 256 --n-positions 128 --seed 1");

    // train
    TrainOptions train_options;
    std::string train_dir, train_data, train_save, train_log_every;
    TrainingFlags train_flags;
    CLI::App* train = app.add_subcommand(
        "train", "Fine-tune a causal language model folder on a text file (AdamW, gradient clipping) and save it");
    train->add_option("DIR", train_dir, "A causal LM model folder; its tokenizer files (vocab.json + merges.txt or tokenizer.json) tokenise the text")
        ->required()
        ->type_name("");
    train->add_option("--data", train_data, "A UTF-8 text file to train on")->required()->type_name("TEXT");
    train_flags.add_to(train, "100", "5e-05");
    train->add_option("--checkpoint", train_options.checkpoint,
                      "Checkpointing policy: none, blocks, every:K, sqrt or selective (default: none)")
        ->type_name("POLICY");
    train->add_option("--save", train_save, "Write the trained model here (HF format, atomically; may be DIR)")
        ->type_name("OUT");
    train->add_option("--log-every", train_log_every,
                      "When not on a terminal, print a line every K steps (default: steps/20)")
        ->type_name("K");
    train->footer(
        "Each step draws --batch windows of --seq consecutive tokens from the text, at offsets drawn from --seed,\n"
        "and minimises the mean next-token cross-entropy (HF's causal LM loss with labels = the window).\n"
        "On a terminal one live line shows step, loss, tokens/s, peak activation memory and ETA.\n"
        "\n" + causal_lms() + "\n"
        "Example:\n"
        "  remat train tiny --data book.txt --steps 200 --batch 8 --seq 128 --checkpoint blocks --lr 1e-3 --save out");

    // demo
    DemoOptions demo_options;
    std::string demo_dir, demo_data;
    TrainingFlags demo_flags;
    CLI::App* demo = app.add_subcommand(
        "demo", "Fine-tune a causal LM with and without checkpointing and compare time, memory and gradients");
    demo->add_option("DIR", demo_dir, "A causal LM model folder (default: a small byte-level model built from the seed)")
        ->type_name("");
    demo->add_option("--data", demo_data, "A UTF-8 text file (default: data/founding-texts.txt, built in)")
        ->type_name("TEXT");
    demo_flags.add_to(demo, "20", "0.001");
    demo->footer(
        "Both runs start from the same weights and seed and see the same windows and dropout masks; the second\n"
        "wraps every block in Checkpointed (policy blocks). Prints time per step, peak activation memory and\n"
        "final loss of each, and \"max gradient difference: 0\" — the largest difference between any gradient\n"
        "of the two runs over all steps, which must be exactly 0.\n"
        "\n" + causal_lms() + "\n"
        "Examples:\n"
        "  remat demo\n"
        "  remat demo models/" + first_type + " --steps 5 --batch 2 --seq 256");

    // info
    std::string info_path;
    CLI::App* info = app.add_subcommand(
        "info", "Describe a model folder (architecture, config, checkpoint tensors, parameter count) or a .safetensors file");
    info->add_option("PATH", info_path, "A model folder (config.json + model.safetensors) or a .safetensors file")
        ->required()
        ->type_name("");
    info->footer(all_architectures() + "\nExample:\n  remat info models/" + first_type +
                 "          # prints e.g. \"parameters: 124439808\"");

    // run
    RunOptions run_options;
    std::string run_dir, input, output;
    CLI::App* run = app.add_subcommand(
        "run", "Run one forward and backward pass (dropout off) and write logits, loss, gradients and stats");
    run->add_option("DIR", run_dir, "A model folder: config.json (" + remat::models::join(types, "or") + ") and model.safetensors")
        ->required()
        ->type_name("");
    run->add_option("--input,-i", input, "IN.safetensors: input_ids (I64, (B, T)), optional attention_mask, "
                                         "token_type_ids, labels (I64, (B, T); label -100 = ignore)")
        ->required()
        ->type_name("IN");
    run->add_option("--out,-o", output, "OUT.safetensors to write (atomically): logits, loss, stats.*, and grad.* with --grads")
        ->required()
        ->type_name("OUT");
    run->add_flag("--grads", run_options.grads, "Also write grad.NAME for every parameter (HF names and layout)");
    run->add_option("--checkpoint", run_options.checkpoint,
                    "Checkpointing policy: none, blocks, every:K, sqrt or selective (default: none)")
        ->type_name("POLICY");
    Text repeat;
    add(run, "--repeat", repeat, "Timed forward+backward passes; stats.seconds is their median (default: 1)", "N");
    run->footer(
        "OUT holds logits (F32, (B, T, V)), loss (F32, ()), stats.seconds and stats.peak_activation_bytes (F64, ()),\n"
        "and with --grads grad.NAME (F32) for every parameter. A causal LM without labels uses input_ids as labels;\n"
        "a masked LM without labels writes logits and stats only.\n"
        "\n" + all_architectures() + "\n"
        "Example:\n"
        "  remat run models/" + first_type + " --input batch.safetensors --out out.safetensors --grads --checkpoint blocks --repeat 5");

    if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1]))
        throw Failure(std::string("unknown command \"") + argv[1] +
                      "\" (the commands are init, train, demo, info and run; see remat --help)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const CLI::App* where = &app;
        for (const CLI::App* sub : {init, train, demo, info, run})
            if (sub->parsed()) where = sub;
        const std::string help = where == &app ? "remat --help" : "remat " + where->get_name() + " --help";
        throw Failure(std::string(e.what()) + " (see " + help + ")");
    }

    if (init->parsed()) {
        init_options.dir = init_dir;
        init_options.n_layer = count_if_given("--n-layer", n_layer, 1);
        init_options.n_embd = count_if_given("--n-embd", n_embd, 1);
        init_options.n_head = count_if_given("--n-head", n_head, 1);
        init_options.vocab_size = count_if_given("--vocab-size", vocab_size, 1);
        init_options.n_positions = count_if_given("--n-positions", n_positions, 1);
        if (init_seed.given()) init_options.seed = static_cast<std::uint64_t>(parse_count("--seed", init_seed.value, 0));
        return remat::cli::init(init_options);
    }
    if (train->parsed()) {
        train_options.dir = train_dir;
        train_options.data = train_data;
        if (!train_save.empty()) train_options.save = train_save;
        train_flags.read(train_options.steps, train_options.batch, train_options.seq, train_options.hyper,
                         train_options.seed);
        if (!train_log_every.empty()) train_options.log_every = parse_count("--log-every", train_log_every, 1);
        return remat::cli::train(train_options);
    }
    if (demo->parsed()) {
        if (!demo_dir.empty()) demo_options.dir = demo_dir;
        if (!demo_data.empty()) demo_options.data = demo_data;
        demo_flags.read(demo_options.steps, demo_options.batch, demo_options.seq, demo_options.hyper, demo_options.seed);
        return remat::cli::demo(demo_options);
    }
    if (info->parsed()) return remat::cli::info(info_path);
    if (run->parsed()) {
        run_options.dir = run_dir;
        run_options.input = input;
        run_options.output = output;
        if (repeat.given()) run_options.repeat = parse_count("--repeat", repeat.value, 1);
        return remat::cli::run(run_options);
    }
    std::cout << app.help();  // no command: the overview
    return exit_ok;
}
}  // namespace

int main(int argc, char** argv) {
    try {
        return main_with_exceptions(argc, argv);
    } catch (const Failure& e) {
        print_error(e.what());
    } catch (const remat::Error& e) {
        print_error(e.what());
    } catch (const std::bad_alloc&) {
        print_error("out of memory");
    } catch (const std::exception& e) {
        print_error(e.what());
    } catch (...) {
        print_error("unexpected failure");
    }
    return exit_failure;
}
