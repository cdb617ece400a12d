// The `remat` command: `remat info PATH`, `remat run DIR --input IN --out OUT`. Every failure —
// usage mistakes included — is one "error: …" line on stderr and exit code 2 (docs/cli.md).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstring>
#include <new>

#include "remat/core/error.hpp"
#include "src/cli/errors.hpp"
#include "src/cli/info.hpp"
#include "src/cli/run.hpp"

using namespace remat::cli;

namespace {
constexpr const char* commands[] = {"info", "run"};

bool is_command(const char* arg) {
    for (const char* c : commands)
        if (std::strcmp(arg, c) == 0) return true;
    return false;
}

int main_with_exceptions(int argc, char** argv) {
    CLI::App app{"remat: HuggingFace GPT-2 and BERT models in C++, with exact gradient checkpointing."};
    app.name("remat");
    app.require_subcommand(0, 1);
    app.footer(
        "Examples:\n"
        "  remat info models/gpt2\n"
        "  remat info model.safetensors\n"
        "  remat run models/gpt2 --input batch.safetensors --out out.safetensors --grads --checkpoint blocks\n"
        "\n"
        "Every failure prints one line \"error: ...\" on stderr and exits with code 2. See docs/cli.md.");

    std::string info_path;
    CLI::App* info = app.add_subcommand(
        "info", "Describe a model folder (architecture, config, checkpoint tensors, parameter count) or a .safetensors file");
    info->add_option("PATH", info_path, "A model folder (config.json + model.safetensors) or a .safetensors file")
        ->required()
        ->type_name("");

    RunOptions options;
    std::string dir, input, output;
    CLI::App* run = app.add_subcommand(
        "run", "Run one forward and backward pass (dropout off) and write logits, loss, gradients and stats");
    run->add_option("DIR", dir, "A model folder: config.json (gpt2 or bert) and model.safetensors")
        ->required()
        ->type_name("");
    run->add_option("--input,-i", input, "IN.safetensors: input_ids (I64, (B, T)), optional attention_mask, "
                                         "token_type_ids, labels (I64, (B, T); label -100 = ignore)")
        ->required()
        ->type_name("IN");
    run->add_option("--out,-o", output, "OUT.safetensors to write (atomically): logits, loss, stats.*, and grad.* with --grads")
        ->required()
        ->type_name("OUT");
    run->add_flag("--grads", options.grads, "Also write grad.NAME for every parameter (HF names and layout)");
    run->add_option("--checkpoint", options.checkpoint,
                    "Checkpointing policy: none, blocks, every:K, sqrt or selective (default: none)")
        ->type_name("POLICY");
    std::string repeat = "1";  // parsed below: CLI11 silently clamps an overflowing integer
    run->add_option("--repeat", repeat,
                    "Timed forward+backward passes; stats.seconds is their median (default: 1)")
        ->type_name("N");

    info->footer("Example:\n  remat info models/gpt2          # prints e.g. \"parameters: 124439808\"");
    run->footer(
        "OUT holds logits (F32, (B, T, V)), loss (F32, ()), stats.seconds and stats.peak_activation_bytes (F64, ()),\n"
        "and with --grads grad.NAME (F32) for every parameter. GPT-2 without labels uses input_ids as labels;\n"
        "BERT without labels writes logits and stats only.\n"
        "\n"
        "Example:\n"
        "  remat run models/gpt2 --input batch.safetensors --out out.safetensors --grads --checkpoint blocks --repeat 5");

    if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1]))
        throw Failure(std::string("unknown command \"") + argv[1] + "\" (the commands are info and run; see remat --help)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const CLI::App* where = run->parsed() ? run : info->parsed() ? info : &app;
        const std::string help = where == &app ? "remat --help" : "remat " + where->get_name() + " --help";
        throw Failure(std::string(e.what()) + " (see " + help + ")");
    }

    if (info->parsed()) return remat::cli::info(info_path);
    if (run->parsed()) {
        options.dir = dir;
        options.input = input;
        options.output = output;
        const auto [end, error] = std::from_chars(repeat.data(), repeat.data() + repeat.size(), options.repeat);
        if (error != std::errc() || end != repeat.data() + repeat.size())
            throw Failure("--repeat must be a whole number of passes, got \"" + repeat + "\"");
        return remat::cli::run(options);
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
