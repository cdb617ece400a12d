#pragma once
// A subcommand of `remat`: its CLI11 sub-app, with the flags bound to the command's own option values,
// and what runs it once the command line has been parsed. Each command's file registers itself
// (add_<command>_command); cli/main.cpp only lists them.
#include <CLI/CLI.hpp>
#include <functional>

namespace remat::cli {

struct Command {
    CLI::App* app;
    std::function<int()> run;  // reads the parsed flags strictly (cli/numbers.hpp), then runs
};

}  // namespace remat::cli
