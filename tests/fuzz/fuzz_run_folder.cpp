// libFuzzer target: resuming a training run from a damaged checkpoint folder. Once, a tiny GPT-2 is
// trained for 2 steps into OUT/checkpoint-2 (config.json, model.safetensors, optimiser.safetensors,
// run_state.json); that folder is the template. Each input is up to four edits of it — a file replaced
// by bytes of the input, bytes overwritten, a file cut short or removed, or one value of run_state.json
// set to a hostile one (a wrong type, a negative or huge number, a string) — after which the run is
// resumed as `remat train --resume` does (weights loaded from the folder, Trainer::resume, the
// remaining step run). Every input must resume and train or raise a remat::Error (a format error, an
// argument mismatch, a non-finite loss); anything else is a finding. Seeds: corpus/run_folder/.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/architecture.hpp"
#include "remat/core/error.hpp"
#include "remat/data/corpus.hpp"
#include "remat/data/dataset.hpp"
#include "remat/text/tokenizer.hpp"
#include "remat/train/run_folders.hpp"
#include "remat/train/trainer.hpp"

using namespace remat;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_bytes(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}
void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes; }

// The run: a 2-layer GPT-2 over bytes, 3 steps of 2 windows of 8; saved after step 2.
struct Run {
    fs::path root = fs::temp_directory_path() / ("remat-fuzz-run-" + std::to_string(::getpid()));
    const text::ByteTokenizer bytes;
    const models::Architecture& gpt2 = *models::find_class("GPT2LMHeadModel");
    const std::string config = gpt2.config_with({.n_layer = 2, .n_embd = 16, .n_head = 2, .vocab_size = 256, .n_positions = 8});
    std::optional<data::TokenCorpus> corpus;
    std::optional<data::LmWindows> windows;
    std::map<std::string, std::string> files;  // the template checkpoint's files by name

    Run() {
        fs::create_directories(root);
        std::string book;
        for (int i = 0; i < 4; ++i) book += "Call me Ishmael. Some years ago, never mind how long precisely.\n";
        write_bytes(root / "book.txt", book);
        corpus.emplace(data::TokenCorpus::encode_text(root / "book.txt", bytes));
        windows.emplace(*corpus, 8);
        Generator init(7);
        auto dropout = std::make_shared<Generator>(7);
        auto model = gpt2.create(config, init, dropout, Policy::blocks());
        train(*model, dropout, root / "template", 2);
        for (const auto& e : fs::directory_iterator(root / "template" / "checkpoint-2"))
            files[e.path().filename().string()] = read_bytes(e.path());
    }
    ~Run() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }

    train::RunSummary train(models::Model& model, std::shared_ptr<Generator> dropout, const fs::path& out, std::int64_t stop_after,
                            const std::optional<fs::path>& resume = std::nullopt) {
        train::Trainer trainer(model, *windows,
                               {.steps = 3, .batch = 2, .adamw = {.lr = 1e-2f, .weight_decay = 0.1f}, .clip = 1.0f, .seed = 7,
                                .dropout = dropout, .save = out,
                                .save_model = [&](const fs::path& folder) { model.save(config, folder); },
                                .arguments = {{"--lr", "0.01"}, {"--seq", "8"}},
                                .stop_requested = [&, stop_after] { return trainer.state().step == stop_after ? 15 : 0; }});
        if (resume) trainer.resume(*resume);
        return trainer.run();
    }
};

// Choices from the input's bytes; zeros once they run out.
struct Draw {
    const std::uint8_t* at;
    std::size_t left;
    std::uint8_t byte() { return left ? (--left, *at++) : 0; }
    std::size_t below(std::size_t n) { return n ? (byte() | std::size_t{byte()} << 8 | std::size_t{byte()} << 16) % n : 0; }
    std::string text(std::size_t max) {
        const std::size_t n = std::min(below(max + 1), left);
        std::string s(reinterpret_cast<const char*>(at), n);
        at += n, left -= n;
        return s;
    }
};

// Every value in a JSON document, by pointer ("/step", "/generators/0/1/counter", …).
void leaves(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
    out.push_back(at);
    if (j.is_object())
        for (const auto& [key, value] : j.items()) leaves(value, at / key, out);
    else if (j.is_array())
        for (std::size_t i = 0; i < j.size(); ++i) leaves(j[i], at / i, out);
}

json hostile_value(Draw& d) {
    static const std::vector<json> values = {nullptr, true, -1, 0, 1, 3, 1000000, -9223372036854775807LL - 1, 18446744073709551615ULL,
                                             1e300, 0.5, "", "x", "3", json::array(), json::object(), json::array({1, 2}),
                                             json::object({{"a", 1}})};
    return values[d.below(values.size())];
}

void edit(std::map<std::string, std::string>& files, Draw& d) {
    if (files.empty()) return;
    auto it = std::next(files.begin(), static_cast<std::ptrdiff_t>(d.below(files.size())));
    std::string& bytes = it->second;
    switch (d.byte() % 7) {
        case 0: bytes = d.text(4096); break;
        case 6: break;  // the folder as saved: the run resumes
        case 1:
            for (std::size_t k = 0, n = 1 + d.byte() % 8; k < n && !bytes.empty(); ++k) bytes[d.below(bytes.size())] = static_cast<char>(d.byte());
            break;
        case 2: bytes.resize(d.below(bytes.size() + 1)); break;
        case 3: files.erase(it); break;
        default: {  // a value of run_state.json
            std::string& state = files["run_state.json"];
            json doc = json::parse(state, nullptr, false);
            if (doc.is_discarded()) break;
            std::vector<json::json_pointer> all;
            leaves(doc, json::json_pointer(), all);
            const json::json_pointer target = all[d.below(all.size())];
            if (target.empty()) break;
            doc[target] = hostile_value(d);
            state = doc.dump();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Run run;
    Draw d{data, size};
    std::map<std::string, std::string> files = run.files;
    for (int k = 0, n = 1 + d.byte() % 4; k < n; ++k) edit(files, d);

    const fs::path out = run.root / "out";
    std::error_code ec;
    fs::remove_all(out, ec);
    fs::create_directories(out / "checkpoint-2");
    for (const auto& [name, bytes] : files) write_bytes(out / "checkpoint-2" / name, bytes);
    if (std::getenv("REMAT_FUZZ_SHOW"))
        for (const auto& [name, bytes] : files) std::fprintf(stderr, "%s: %zu bytes%s%s\n", name.c_str(), bytes.size(), name.ends_with(".json") ? "\n" : "", name.ends_with(".json") ? bytes.c_str() : "");

    try {
        const auto latest = train::latest_run_folder(out);
        if (!latest) return 0;  // no run_state.json: not a checkpoint
        auto dropout = std::make_shared<Generator>(7);
        auto model = models::load(run.gpt2, *latest, Policy::blocks(), dropout);
        const train::RunSummary done = run.train(*model, dropout, out, -1, *latest);
        if (std::getenv("REMAT_FUZZ_SHOW")) std::fprintf(stderr, "resumed at step %lld, trained to %lld\n", (long long)done.first_step, (long long)done.last_step);
    } catch (const Error& e) {
        if (std::getenv("REMAT_FUZZ_SHOW")) std::fprintf(stderr, "refused: %s\n", e.what());
    }
    return 0;
}
