// The `remat` command (docs/cli.md): each command registers its own flags (cli/command.hpp); this
// file lists them, parses, and turns every failure — usage mistakes included — into one
// "error: …" line on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <new>
#include <string_view>

#include "cli/demo.hpp"
#include "cli/encode.hpp"
#include "cli/generate.hpp"
#include "cli/errors.hpp"
#include "remat/ops/threads.hpp"
#include "cli/flags.hpp"
#include "cli/info.hpp"
#include "cli/init.hpp"
#include "cli/merge.hpp"
#include "cli/plan.hpp"
#include "cli/plot.hpp"
#include "cli/run.hpp"
#include "cli/template.hpp"
#include "cli/tokenize.hpp"
#include "cli/train.hpp"
#include "models/architecture.hpp"
#include "remat/core/error.hpp"
#include "src/dist/openmpi_leaks.hpp"  // `mpirun … remat train` under the sanitizers

using namespace remat::cli;

namespace {

int main_with_exceptions(int argc, char** argv) {
    // A bad REMAT_NUM_THREADS is refused before any work; a huge one runs on max_threads, said so.
    if (const auto threads = remat::ops::requested_threads(); threads && *threads > remat::ops::max_threads())
        print_warning("REMAT_NUM_THREADS=" + std::string(std::getenv("REMAT_NUM_THREADS")) + " is more threads than remat runs here; using " +
                      std::to_string(remat::ops::max_threads()) + " (four per CPU)");
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

    const std::vector<Command> commands = {add_init_command(app),  add_train_command(app), add_demo_command(app),
                                           add_info_command(app), add_run_command(app),   add_encode_command(app), add_tokenize_command(app), add_template_command(app), add_generate_command(app),
                                           add_plot_command(app),  add_plan_command(app), add_merge_command(app)};
    std::vector<std::string> names;
    for (const Command& c : commands) names.push_back(c.app->get_name());

    if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end())
        throw Failure(std::string("unknown command \"") + argv[1] + "\" (the commands are " +
                      remat::models::join(names, "and") + "; see remat --help)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const CLI::App* where = &app;
        for (const Command& c : commands)
            if (c.app->parsed()) where = c.app;
        const std::string help = where == &app ? "remat --help" : "remat " + where->get_name() + " --help";
        // CLI11 reports a missing positional before an unknown option: `remat info -x` would say "PATH
        // is required". The option it took for one is the problem.
        if (dynamic_cast<const CLI::RequiredError*>(&e))
            for (int i = 2; i < argc && std::string_view(argv[i]) != "--"; ++i) {
                const std::string arg = argv[i];
                if (arg.size() < 2 || arg[0] != '-') continue;
                const CLI::Option* option = where->get_option_no_throw(arg.substr(0, arg.find('=')));
                if (option && option->get_items_expected_max() > 0 && arg.find('=') == std::string::npos) ++i;  // its value
                if (!option)
                    throw Failure("unknown option " + arg + " (a path that starts with '-' is written ./" + arg + ", or after --; see " +
                                  help + ")");
            }
        throw Failure(std::string(e.what()) + " (see " + help + ")");
    }

    for (const Command& c : commands)
        if (c.app->parsed()) return c.run();
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
