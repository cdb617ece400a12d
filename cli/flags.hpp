#pragma once
// What the commands' flag definitions share: numbers taken as text and read strictly afterwards
// (cli/numbers.hpp: CLI11 would clamp an overflowing integer), the flags of every training command,
// and the architecture table's lines for help texts.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "cli/training.hpp"
#include "models/architecture.hpp"
#include "remat/ops/precision.hpp"

namespace remat::cli {

// A flag's text; empty means "not given".
// A flag's text, and whether the command line had it (an empty value given, --budget "", is given:
// the flag's parser then names it, rather than the default silently taking its place).
struct Text {
    std::string value;
    bool seen = false;  // set by add()'s option
    bool given() const { return seen || !value.empty(); }
};

CLI::Option* add(CLI::App* app, const std::string& name, Text& text, const std::string& help, const std::string& type);

std::optional<std::int64_t> count_if_given(const std::string& option, const Text& t, std::int64_t minimum);

// --precision fp32|bf16 (docs/precision.md), for the commands that run a model; `what` says what it
// applies to.
CLI::Option* add_precision(CLI::App* app, Text& text, const std::string& what);
// fp32 when not given; an unknown name is a Failure naming the flag.
Precision precision_of(const Text& text, const std::string& flag = "--precision");

// The flags train and demo share; their defaults differ (the demo fine-tunes fast).
struct TrainingFlags {
    Text steps, batch, seq, lr, weight_decay, clip, seed;

    void add_to(CLI::App* app, const std::string& default_steps, const std::string& default_lr);
    void read(std::int64_t& n_steps, std::int64_t& n_batch, std::optional<std::int64_t>& n_seq, Hyper& hyper,
              std::uint64_t& n_seed) const;
};

// The architectures of the table, one line each: "  <model_type>  <HF class> (<family>, <objective>;
// also loads <classes>)", limited to those `keep` accepts.
std::string architecture_lines(const std::function<bool(const models::Architecture&)>& keep);
std::string all_architectures();  // "Architectures (model_type and HF class):\n" and every line
std::string causal_lms();         // "Architectures it trains:\n" and the causal LMs' lines
std::string trainable_lms();      // "Architectures it trains:\n" and those with a language-model head

}  // namespace remat::cli
