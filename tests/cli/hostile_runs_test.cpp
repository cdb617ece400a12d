// Hostile input around a model rather than in its weights (issue 35), through the built `remat`:
// Llama / Qwen2 / Mistral config.json values, a training run's --save folder and log, plot logs,
// checkpointing texts, mpirun ranks started with different arguments, REMAT_NUM_THREADS, and paths
// (longer than PATH_MAX, a name starting with '-', symlink loops). Every refusal keeps the contract
// of docs/reliability.md ("What every refusal looks like"): exit code 2, no signal, stdout empty, one
// "error:" line (warnings allowed) naming the file, field or flag and the value, within seconds,
// under a 1 GiB address-space limit, with every input, earlier checkpoint and existing output
// byte-identical and no temporary left. Where remat is right to accept, the test says why and
// asserts what it does instead.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "remat/core/in_quotes.hpp"
#include "tests/cli/run_remat.hpp"

using namespace remat;
using namespace cli_test;

namespace {

const ChildMemoryLimit one_gib(rlim_t{1} << 30);

using Clock = std::chrono::steady_clock;
using ordered_json = nlohmann::ordered_json;

fs::path place(const std::string& name) {
    const fs::path dir = scratch() / "hostile-runs" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// The command line as a message shows it, paths of thousands of bytes shortened.
std::string joined(const std::vector<std::string>& args) {
    std::string text = "remat";
    for (const auto& a : args) text += " " + (a.empty() ? std::string("''") : a.size() > 120 ? a.substr(0, 60) + "..." + a.substr(a.size() - 40) : a);
    return text;
}

struct Timed {
    Result result;
    double seconds = 0;
};

// run_remat with a deadline of its own: a hang fails its case after `limit` seconds (SIGTERM, then
// SIGKILL), not the whole suite after minutes; a signal fails the check instead of the test case.
Timed run_within(const std::vector<std::string>& args, double limit = 20) {
    const fs::path out = scratch() / "runs-stdout", err = scratch() / "runs-stderr";
    const auto start = Clock::now();
    const pid_t pid = start_remat(args, {out.string()}, {err.string()});
    int status = 0;
    bool stopped = false;
    for (;;) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done < 0) FAIL("waitpid failed: " << std::strerror(errno));
        if (done == pid) break;
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!stopped && seconds > limit) {
            ::kill(pid, SIGTERM);  // mpirun passes it on to its ranks
            stopped = true;
        } else if (seconds > limit + 5) {
            ::kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Timed t{{-1, read_text(out), read_text(err)}, std::chrono::duration<double>(Clock::now() - start).count()};
    CHECK_MESSAGE(!stopped, "remat did not finish within " << limit << " s");
    CHECK_MESSAGE(WIFEXITED(status), "remat was killed by signal " << WTERMSIG(status));
    if (WIFEXITED(status) && !stopped) t.result.code = WEXITSTATUS(status);
    return t;
}

// Everything at and below `root`, to compare before and after: files with their bytes, folders,
// symlinks with their targets (never followed). A temporary left behind shows up as a new entry.
std::map<std::string, std::string> contents(const fs::path& root) {
    std::map<std::string, std::string> found;
    const auto describe = [](const fs::directory_entry& e) {
        if (e.is_symlink()) return "-> " + fs::read_symlink(e.path()).string();
        if (e.is_directory()) return std::string("<folder>");
        return read_text(e.path());
    };
    const fs::directory_entry top(root);
    if (!top.is_symlink() && !top.exists()) return found;
    found["."] = describe(top);
    if (top.is_symlink() || !top.is_directory()) return found;
    for (const auto& e : fs::recursive_directory_iterator(root)) found[e.path().lexically_relative(root).string()] = describe(e);
    return found;
}

// What an error line must contain: a text, or a value standing alone (not inside a longer number
// or name, as "0" inside "10000" or a path).
struct Says {
    std::string text;
    bool alone = false;
    Says(const char* t) : text(t) {}
    Says(std::string t) : text(std::move(t)) {}
};
Says value(const std::string& v) {
    Says s(v);
    s.alone = true;
    return s;
}

bool contains(const std::string& line, const Says& s) {
    if (!s.alone) return line.find(s.text) != std::string::npos;
    const auto part_of_word = [](char c, bool before) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' || (before && c == '-');
    };
    for (std::size_t at = line.find(s.text); at != std::string::npos; at = line.find(s.text, at + 1)) {
        const bool starts = at == 0 || !part_of_word(line[at - 1], true);
        const std::size_t end = at + s.text.size();
        const bool ends = end == line.size() || !part_of_word(line[end], false);
        if (starts && ends) return true;
    }
    return false;
}

// The single error line of a refusal's stderr (its text after "error: "), checking the rest of the
// contract's shape: only warning lines beside it, at most 4096 bytes, valid UTF-8 without control bytes.
std::string error_line(const std::string& err) {
    CHECK_MESSAGE((err.empty() || err.back() == '\n'), "stderr must end with a newline");
    std::string line;
    int errors = 0;
    std::stringstream in(err);
    for (std::string l; std::getline(in, l);) {
        if (l.starts_with("error: ")) {
            ++errors;
            line = l.substr(7);
        } else {
            CHECK_MESSAGE(l.starts_with("warning: "), "a stderr line that is neither a warning nor the error: " << l);
        }
    }
    CHECK_MESSAGE(errors == 1, "expected exactly one error line, found " << errors);
    CHECK(line.size() + 8 <= 4096);
    CHECK(printable(line) == line);
    return line;
}

// The refusal contract. `says`: what the error line must name; `kept`: paths (files or folders) that
// must hold exactly what they held before. The line is checked only when remat did refuse, so an
// acceptance fails once, not once per missing word.
std::string refused(const std::vector<std::string>& args, const std::vector<Says>& says, const std::vector<fs::path>& kept = {},
                    double limit = 20) {
    std::vector<std::map<std::string, std::string>> before;
    for (const auto& p : kept) before.push_back(contents(p));
    const Timed t = run_within(args, limit);
    const std::string command = joined(args), out = t.result.out.substr(0, 200), err = t.result.err.substr(0, 600);
    CAPTURE(command);
    CAPTURE(out);
    CAPTURE(err);
    CHECK(t.result.code == 2);
    CHECK(t.result.out.empty());
    CHECK(t.seconds < 10);
    std::string line;
    if (t.result.code == 2) {
        line = error_line(t.result.err);
        for (const Says& s : says) CHECK_MESSAGE(contains(line, s), "the error line does not name " << s.text);
    }
    for (std::size_t i = 0; i < kept.size(); ++i) CHECK_MESSAGE(contents(kept[i]) == before[i], kept[i].string() << " changed");
    return line;
}

// A successful run within seconds under the memory limit; its warnings are returned.
Timed accepted(const std::vector<std::string>& args, double limit = 20) {
    const Timed t = run_within(args, limit);
    const std::string command = joined(args), err = t.result.err.substr(0, 600);
    CAPTURE(command);
    CAPTURE(err);
    CHECK(t.result.code == 0);
    CHECK(t.result.err.find("error:") == std::string::npos);
    return t;
}

// An environment variable set for the runs of one scope.
struct ScopedEnv {
    std::string name;
    std::optional<std::string> saved;
    ScopedEnv(std::string n, const std::string& v) : name(std::move(n)) {
        if (const char* old = std::getenv(name.c_str())) saved = old;
        ::setenv(name.c_str(), v.c_str(), 1);
    }
    ~ScopedEnv() {
        if (saved)
            ::setenv(name.c_str(), saved->c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
};

// --- tensors of a safetensors file, to take apart and write back ---

struct Tensors {
    std::vector<std::string> names;
    std::vector<Tensor> values;
    std::vector<std::pair<std::string, std::string>> metadata;
};
Tensors read_tensors(const fs::path& p) {
    const auto f = hf::SafetensorsFile::open(p);
    Tensors t;
    t.metadata = f.metadata();
    for (const hf::TensorInfo& info : f.tensors()) {
        t.names.push_back(info.name);
        t.values.push_back(f.read_float(info));
    }
    return t;
}
// Written beside `p` and renamed over it: `p` stays mapped while read_tensors' file is open.
void write_tensors(const fs::path& p, const Tensors& t) {
    std::vector<hf::WriteTensor> entries;
    for (std::size_t i = 0; i < t.names.size(); ++i) entries.push_back(hf::f32(t.names[i], t.values[i]));
    const fs::path next = p.string() + ".next";
    hf::write_safetensors(next, entries, t.metadata);
    fs::rename(next, p);
}
void swap_names(const fs::path& p, const std::string& a, const std::string& b) {
    Tensors t = read_tensors(p);
    auto ia = std::find(t.names.begin(), t.names.end(), a), ib = std::find(t.names.begin(), t.names.end(), b);
    REQUIRE(ia != t.names.end());
    REQUIRE(ib != t.names.end());
    std::iter_swap(ia, ib);
    write_tensors(p, t);
}
void drop(const fs::path& p, const std::string& name) {
    Tensors t = read_tensors(p);
    const auto i = std::find(t.names.begin(), t.names.end(), name);
    REQUIRE(i != t.names.end());
    t.values.erase(t.values.begin() + (i - t.names.begin()));
    t.names.erase(i);
    write_tensors(p, t);
}

void edit_json(const fs::path& p, const std::function<void(ordered_json&)>& edit) {
    ordered_json j = ordered_json::parse(read_text(p));
    edit(j);
    write_text(p, j.dump(2) + "\n");
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// 1. Llama / Qwen2 / Mistral config.json values
// ------------------------------------------------------------------------------------------------

namespace {

const fs::path llama_fixtures = fixtures / "llama";

// A copy of a Llama-family fixture with config.json fields set to raw JSON text: 1e999 and "NaN"
// are written as they are (1e999 is no double nlohmann could hold).
fs::path llama_with(const std::string& fixture, const std::string& name, const std::vector<std::pair<std::string, std::string>>& fields) {
    const fs::path dir = place("config/" + name);
    fs::copy_file(llama_fixtures / fixture / "model.safetensors", dir / "model.safetensors");
    ordered_json config = ordered_json::parse(read_text(llama_fixtures / fixture / "config.json"));
    for (const auto& [field, raw] : fields) config[field] = "@@" + field + "@@";
    std::string text = config.dump(2);
    for (const auto& [field, raw] : fields) {
        const std::string mark = "\"@@" + field + "@@\"";
        text.replace(text.find(mark), mark.size(), raw);
    }
    write_text(dir / "config.json", text + "\n");
    return dir;
}

// IN and an earlier OUT for `remat run`, in a folder of their own that must stay as it was.
struct RunFiles {
    fs::path folder, in, out;
};
RunFiles run_files() {
    const fs::path folder = place("io");
    RunFiles f{folder, folder / "in.safetensors", folder / "out.safetensors"};
    write_ids(f.in, {{"input_ids", IdTensor{{1, 2, 3, 4}}}});
    write_text(f.out, "an earlier output\n");
    return f;
}

struct ConfigCase {
    std::string name, fixture;
    std::vector<std::pair<std::string, std::string>> fields;
    std::function<std::vector<Says>(const fs::path& dir)> says;
};

// `info DIR` and `run DIR --input IN --out OUT` both refuse, naming the same thing.
void both_refuse(const ConfigCase& c) {
    const fs::path dir = llama_with(c.fixture, c.name, c.fields);
    const RunFiles io = run_files();
    refused({"info", dir.string()}, c.says(dir), {dir});
    refused({"run", dir.string(), "--input", io.in.string(), "--out", io.out.string()}, c.says(dir), {dir, io.folder});
}

std::function<std::vector<Says>(const fs::path&)> config_says(const std::string& text) {
    return [text](const fs::path& dir) { return std::vector<Says>{(dir / "config.json").string() + ": " + text}; };
}
std::function<std::vector<Says>(const fs::path&)> weights_say(const std::string& text) {
    return [text](const fs::path& dir) { return std::vector<Says>{(dir / "model.safetensors").string() + ": " + text}; };
}
// A field named with its value, in config.json's own error.
std::function<std::vector<Says>(const fs::path&)> config_names(const std::string& field, const std::string& v) {
    return [field, v](const fs::path& dir) { return std::vector<Says>{(dir / "config.json").string() + ": ", field, value(v)}; };
}

const std::string linear = R"({"rope_type": "linear", "factor": )";

}  // namespace

TEST_CASE("1. Llama-family config.json values: rope_scaling, rope_theta, heads, windows, eps, vocab_size") {
    const std::vector<ConfigCase> cases = {
        // rope_scaling: a factor must be a positive, finite number; other types are refused by name.
        {"rope-factor-0", "llama-gqa", {{"rope_scaling", linear + "0}"}}, config_says("rope_scaling.factor must be a positive number, got 0")},
        {"rope-factor-negative", "qwen2-bias", {{"rope_scaling", linear + "-2.0}"}},
         config_says("rope_scaling.factor must be a positive number, got -2.0")},
        {"rope-factor-NaN-string", "mistral-window", {{"rope_scaling", linear + "\"NaN\"}"}},
         config_says("rope_scaling.factor must be a positive number, got \"NaN\"")},
        {"rope-factor-1e999", "llama3-mqa-tied-bf16",
         {{"rope_scaling", R"({"rope_type": "llama3", "factor": 1e999, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 128})"}},
         config_says("not valid JSON: number overflow parsing '1e999'")},
        {"rope-type-unknown", "qwen2-bias", {{"rope_scaling", R"({"rope_type": "warp", "factor": 2.0})"}},
         config_says("unsupported rope_scaling type \"warp\" (remat implements \"default\", \"linear\" and \"llama3\")")},
        {"rope-type-number", "mistral-window", {{"rope_scaling", R"({"rope_type": 3, "factor": 2.0})"}},
         config_says("rope_scaling.rope_type must be a string, got 3")},
        // rope_theta: the value is the problem, so the line names it.
        {"rope-theta-0", "llama-gqa", {{"rope_theta", "0"}}, config_names("rope_theta", "0")},
        {"rope-theta-negative", "mistral-window", {{"rope_theta", "-10000.0"}}, config_names("rope_theta", "-10000")},  // the number, as remat writes it
        {"rope-theta-1e999", "qwen2-bias", {{"rope_theta", "1e999"}}, config_says("not valid JSON: number overflow parsing '1e999'")},
        {"rope-theta-NaN-string", "llama3-mqa-tied-bf16", {{"rope_theta", "\"NaN\""}}, config_says("rope_theta must be a number, got \"NaN\"")},
        // Heads: hidden_size / num_attention_heads must divide, or head_dim be given; a head_dim the
        // weights were not made with is a load error naming the tensor and both shapes.
        {"hidden-not-divisible", "qwen2-bias", {{"hidden_size", "30"}},
         config_says("Qwen2 config: hidden_size = 30 is not divisible by num_attention_heads = 4 (or set head_dim)")},
        {"head-dim-odd", "llama-gqa", {{"head_dim", "5"}}, config_says("Llama config: the head size 5 must be even (rotary embeddings)")},
        {"head-dim-not-the-weights", "llama-gqa", {{"head_dim", "16"}},
         weights_say("8 of 21 tensors cannot be loaded: model.layers.0.self_attn.q_proj.weight: expected shape (64, 32), found (32, 32)")},
        // HF's head_dim 0 is no default (LlamaAttention divides by it): 0 is not null.
        {"head-dim-0", "llama-gqa", {{"head_dim", "0"}}, config_names("head_dim", "0")},
        // num_key_value_heads 0 is no default either (HF: num_heads // 0): named, not a shape error.
        {"kv-heads-0", "llama-gqa", {{"num_key_value_heads", "0"}}, config_names("num_key_value_heads", "0")},
        {"kv-heads-not-dividing", "mistral-window", {{"num_key_value_heads", "3"}},
         config_says("Mistral config: num_key_value_heads = 3 does not divide num_attention_heads = 4")},
        // sliding_window: null is no window; 0 would hide every key (HF's mask q - W < k <= q), so it
        // is refused rather than read as null.
        {"sliding-window-0", "mistral-window", {{"sliding_window", "0"}}, config_names("sliding_window", "0")},
        {"sliding-window-negative", "mistral-window", {{"sliding_window", "-4"}}, config_says("sliding_window must be a non-negative integer, got -4")},
        {"sliding-window-2e40", "mistral-window", {{"sliding_window", "1099511627776"}},
         config_says("Mistral config: sliding_window = 1099511627776 is over the limit of 16777216")},
        {"qwen2-sliding-window-2e40", "qwen2-bias", {{"use_sliding_window", "true"}, {"sliding_window", "1099511627776"}},
         config_says("Qwen2 config: sliding_window = 1099511627776 is over the limit of 16777216")},
        // rms_norm_eps: the value named.
        {"rms-norm-eps-0", "qwen2-bias", {{"rms_norm_eps", "0"}}, config_names("rms_norm_eps", "0")},
        {"rms-norm-eps-negative", "llama3-mqa-tied-bf16", {{"rms_norm_eps", "-1e-06"}}, config_names("rms_norm_eps", "-1e-06")},
        // vocab_size the weights disagree with: the tensors and both shapes.
        {"vocab-size-65", "llama-gqa", {{"vocab_size", "65"}},
         weights_say("2 of 21 tensors cannot be loaded: model.embed_tokens.weight: expected shape (65, 32), found (64, 32); "
                     "lm_head.weight: expected shape (65, 32), found (64, 32)")},
        {"vocab-size-128-tied", "llama3-mqa-tied-bf16", {{"vocab_size", "128"}},
         weights_say("1 of 20 tensors cannot be loaded: model.embed_tokens.weight: expected shape (128, 32), found (64, 32)")},
        {"vocab-size-63-qwen2", "qwen2-bias", {{"vocab_size", "63"}},
         weights_say("2 of 27 tensors cannot be loaded: model.embed_tokens.weight: expected shape (63, 32), found (64, 32)")},
    };
    for (const ConfigCase& c : cases) {
        SUBCASE(c.name.c_str()) { both_refuse(c); }
    }
}

TEST_CASE("1. Llama-family values that are extreme but meaningful load and run, as HF's would") {
    // A theta of 1e308 makes every rotation ~0 and an eps of 1e308 flattens the norm: legal configs
    // with finite results, which HF computes too.
    const RunFiles io = run_files();
    for (const auto& [name, field, raw] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"theta-1e308", "rope_theta", "1e308"}, {"eps-1e308", "rms_norm_eps", "1e308"}, {"sliding-window-null", "sliding_window", "null"}}) {
        const auto shown = name;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        const fs::path dir = llama_with("mistral-window", name, {{field, raw}});
        accepted({"info", dir.string()});
        fs::remove(io.out);
        accepted({"run", dir.string(), "--input", io.in.string(), "--out", io.out.string()});
        CHECK(fs::exists(io.out));
    }
}

// ------------------------------------------------------------------------------------------------
// 2. Run folders: the run state, the checkpoint's tensors, the log, two runs in one folder
// ------------------------------------------------------------------------------------------------

namespace {

const fs::path& runs() {
    static const fs::path dir = place("runs");
    return dir;
}
fs::path run_model() { return runs() / "model"; }
fs::path run_text() { return runs() / "text.txt"; }

std::vector<std::string> train_args(const fs::path& save) {
    return {"train", run_model().string(), "--data", run_text().string(), "--steps", "6", "--batch", "2", "--seq", "8",
            "--save", save.string(), "--save-every", "2", "--log", save.string() + ".jsonl"};
}

// A byte-level GPT-2 of one block, a text of 166 windows of 8, and a finished 6-step run saved every
// 2 steps: base/checkpoint-2, base/checkpoint-4, base's final model, base.jsonl.
const fs::path& base_run() {
    static const fs::path base = [] {
        REQUIRE(run_remat({"init", run_model().string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                           "--vocab-size", "256", "--n-positions", "32", "--seed", "1"}).code == 0);
        std::string text;
        for (int i = 0; i < 20; ++i) text += "Paragraph " + std::to_string(i) + ": it was the best of times, it was the worst of times.\n";
        write_text(run_text(), text);
        const fs::path b = runs() / "base";
        const Result r = run_remat(train_args(b));
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        REQUIRE(fs::exists(b / "checkpoint-4" / "run_state.json"));
        return b;
    }();
    return base;
}

// A copy of the base run's --save folder and log with `spoil` applied to the copy's checkpoint-4 (the
// one --resume picks); returns the copy.
fs::path spoiled(const std::string& name, const std::function<void(const fs::path& checkpoint)>& spoil) {
    const fs::path copy = runs() / name;
    fs::remove_all(copy);
    fs::remove_all(copy.string() + ".jsonl");
    fs::copy(base_run(), copy, fs::copy_options::recursive);
    fs::copy_file(base_run().string() + ".jsonl", copy.string() + ".jsonl");
    spoil(copy / "checkpoint-4");
    return copy;
}

// Resuming the spoiled copy with the run's own arguments is refused; the copy (its earlier
// checkpoints included) and its log stay as they were.
void resume_refused(const fs::path& copy, const std::vector<Says>& says) {
    auto args = train_args(copy);
    args.insert(args.end(), {"--resume", copy.string()});
    refused(args, says, {copy, copy.string() + ".jsonl"});
}

}  // namespace

TEST_CASE("2. an edited run_state.json: wrong types, a position beyond the run or the data, another data fingerprint") {
    const auto state = [](const fs::path& checkpoint) { return (checkpoint / "run_state.json").string(); };
    SUBCASE("step written as a string") {
        const fs::path copy = spoiled("state-step-string", [](const fs::path& c) { edit_json(c / "run_state.json", [](auto& j) { j["step"] = "4"; }); });
        resume_refused(copy, {state(copy / "checkpoint-4") + ": \"step\" must be a whole number of at least 0"});
    }
    SUBCASE("a generator's key written as a string") {
        const fs::path copy = spoiled("state-key-string", [](const fs::path& c) {
            edit_json(c / "run_state.json", [](auto& j) { j["generators"]["dropout"]["key"] = "1"; });
        });
        resume_refused(copy, {state(copy / "checkpoint-4") + ": \"key\" must be a whole number of at least 0"});
    }
    SUBCASE("an argument written as a number") {
        const fs::path copy = spoiled("state-seq-number", [](const fs::path& c) { edit_json(c / "run_state.json", [](auto& j) { j["arguments"]["--seq"] = 8; }); });
        resume_refused(copy, {state(copy / "checkpoint-4") + ": argument \"--seq\" must be a string"});
    }
    SUBCASE("a step the optimiser state disagrees with") {
        const fs::path copy = spoiled("state-step-100", [](const fs::path& c) { edit_json(c / "run_state.json", [](auto& j) { j["step"] = 100; }); });
        resume_refused(copy, {(copy / "checkpoint-4").string() + ": the optimiser state is at step 4, the run state at step 100"});
    }
    SUBCASE("a step past the run's --steps, the optimiser state edited to agree") {
        // Resumed as it is, the run "finishes" without a step and saves checkpoint-4's weights as the
        // trained model of a 6-step run.
        const fs::path copy = spoiled("state-step-past-the-run", [](const fs::path& c) {
            edit_json(c / "run_state.json", [](auto& j) { j["step"] = 100; });
            Tensors t = read_tensors(c / "optimiser.safetensors");
            for (auto& [key, v] : t.metadata)
                if (key == "step") v = "100";
            write_tensors(c / "optimiser.safetensors", t);
        });
        resume_refused(copy, {(copy / "checkpoint-4").string(), "step", value("100"), value("6")});
    }
    SUBCASE("a window index beyond the data's 166 windows") {
        // The position (epoch, index) of step 4 is window 8 of epoch 0; an index past the windows is
        // not "the epoch is done" but a run state that was not written by this run.
        const fs::path copy = spoiled("state-index-beyond", [](const fs::path& c) { edit_json(c / "run_state.json", [](auto& j) { j["index"] = 100000; }); });
        resume_refused(copy, {state(copy / "checkpoint-4"), "index", value("100000")});
    }
    SUBCASE("an epoch beyond what 4 steps of 2 windows can have reached") {
        const fs::path copy = spoiled("state-epoch-beyond", [](const fs::path& c) {
            edit_json(c / "run_state.json", [](auto& j) { j["epoch"] = std::numeric_limits<std::uint64_t>::max(); });
        });
        resume_refused(copy, {state(copy / "checkpoint-4"), "epoch", value("18446744073709551615")});
    }
    SUBCASE("another data fingerprint (the token count of --data)") {
        const fs::path copy = spoiled("state-data-tokens", [](const fs::path& c) {
            edit_json(c / "run_state.json", [](auto& j) { j["arguments"]["--data tokens"] = "1331"; });
        });
        resume_refused(copy, {"--data tokens 1330 differs from the run being resumed (1331 in " + (copy / "checkpoint-4").string() + ")"});
    }
}

TEST_CASE("2. a checkpoint's tensors: one missing, two swapped, a file cut short") {
    const std::string bias = "transformer.h.0.ln_1.bias";
    SUBCASE("model.safetensors without a tensor") {
        const fs::path copy = spoiled("model-missing", [&](const fs::path& c) { drop(c / "model.safetensors", bias); });
        resume_refused(copy, {(copy / "checkpoint-4" / "model.safetensors").string() + ": 1 of 16 tensors cannot be loaded: missing " + bias +
                              " (expected shape (16,))"});
    }
    SUBCASE("optimiser.safetensors without a moment") {
        const fs::path copy = spoiled("optimiser-missing", [&](const fs::path& c) { drop(c / "optimiser.safetensors", "moments.1." + bias); });
        resume_refused(copy, {(copy / "checkpoint-4" / "optimiser.safetensors").string() +
                              ": cannot load the optimiser state: tensor moments.1." + bias + ": missing"});
    }
    SUBCASE("model.safetensors with two tensors of different shapes swapped") {
        const fs::path copy = spoiled("model-swapped-shapes", [](const fs::path& c) {
            swap_names(c / "model.safetensors", "transformer.h.0.ln_1.weight", "transformer.h.0.mlp.c_fc.bias");
        });
        resume_refused(copy, {(copy / "checkpoint-4" / "model.safetensors").string() +
                              ": 2 of 16 tensors cannot be loaded: transformer.h.0.ln_1.weight: expected shape (16,), found (64,); "
                              "transformer.h.0.mlp.c_fc.bias: expected shape (64,), found (16,)"});
    }
    SUBCASE("optimiser.safetensors with two moments of different shapes swapped") {
        const fs::path copy = spoiled("optimiser-swapped-shapes", [](const fs::path& c) {
            swap_names(c / "optimiser.safetensors", "moments.0.transformer.h.0.ln_1.weight", "moments.0.transformer.wpe.weight");
        });
        resume_refused(copy, {(copy / "checkpoint-4" / "optimiser.safetensors").string() + ": cannot load the optimiser state: tensor "
                              "moments.0.transformer.wpe.weight: expected (32, 16), got (16,)"});
    }
    SUBCASE("model.safetensors with two tensors of the same shape swapped") {
        // Every shape still fits: only a record of what was saved (a digest of the file in
        // run_state.json, written last) tells the swap from the run's own weights. Resumed as it is,
        // the run trains on from weights it never had.
        const fs::path copy = spoiled("model-swapped-same-shape", [](const fs::path& c) {
            swap_names(c / "model.safetensors", "transformer.h.0.ln_1.weight", "transformer.h.0.ln_2.weight");
        });
        resume_refused(copy, {(copy / "checkpoint-4" / "model.safetensors").string()});
    }
    SUBCASE("optimiser.safetensors with AdamW's two moments of one parameter swapped") {
        // Resumed as it is: a negative second moment, a NaN two steps later, and an error blaming --lr.
        const fs::path copy = spoiled("optimiser-swapped-same-shape", [](const fs::path& c) {
            swap_names(c / "optimiser.safetensors", "moments.0.transformer.h.0.ln_1.weight", "moments.1.transformer.h.0.ln_1.weight");
        });
        resume_refused(copy, {(copy / "checkpoint-4" / "optimiser.safetensors").string()});
    }
    SUBCASE("model.safetensors cut short") {
        const fs::path copy = spoiled("model-truncated", [](const fs::path& c) {
            fs::resize_file(c / "model.safetensors", fs::file_size(c / "model.safetensors") * 2 / 3);
        });
        resume_refused(copy, {(copy / "checkpoint-4" / "model.safetensors").string() + ": tensor ", "run past the end of the data section"});
    }
    SUBCASE("optimiser.safetensors cut short") {
        const fs::path copy = spoiled("optimiser-truncated", [](const fs::path& c) {
            fs::resize_file(c / "optimiser.safetensors", fs::file_size(c / "optimiser.safetensors") * 2 / 3);
        });
        resume_refused(copy, {(copy / "checkpoint-4" / "optimiser.safetensors").string() + ": tensor ", "run past the end of the data section"});
    }
    SUBCASE("the log replaced by a folder") {
        const fs::path copy = spoiled("log-folder", [](const fs::path&) {});
        const fs::path log = copy.string() + ".jsonl";
        fs::remove(log);
        fs::create_directory(log);
        resume_refused(copy, {log.string() + ": cannot write: it is a folder"});
    }
}

TEST_CASE("2. two runs started into one --save folder: the second is refused, the first keeps every checkpoint") {
    base_run();  // the model and the text
    const fs::path save = runs() / "shared";
    fs::remove_all(save);
    const auto args = [&](const std::string& lr, const std::string& steps) {
        return std::vector<std::string>{"train", run_model().string(), "--data", run_text().string(), "--steps", steps, "--batch", "2",
                                        "--seq", "8", "--lr", lr, "--save", save.string(), "--save-every", "500"};
    };
    const pid_t first = start_remat(args("0.001", "1000000"), {(runs() / "first.stdout").string()}, {(runs() / "first.stderr").string()});
    struct Stop {  // the first run never outlives the test case
        pid_t pid;
        bool waited = false;
        ~Stop() {
            if (waited) return;
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    } stop{first};
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (!fs::exists(save / "checkpoint-500" / "run_state.json") && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(fs::exists(save / "checkpoint-500" / "run_state.json"));

    // The second run, with its own --lr and length, would write checkpoint-500 and -1000 over the
    // first run's (or remove the .partial folder it is filling): refused before its first step.
    refused(args("0.002", "1500"), {save.string()}, {save / "checkpoint-500"});

    ::kill(first, SIGTERM);  // the first run saves where it is and stops
    int status = 0;
    REQUIRE(::waitpid(first, &status, 0) == first);
    stop.waited = true;
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
    std::size_t checkpoints = 0;
    for (const auto& e : fs::directory_iterator(save)) {
        const std::string name = e.path().filename().string();
        const auto shown = name;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        CHECK_FALSE(name.starts_with("."));  // no .partial or .old folder left
        CHECK(name.find(".tmp-") == std::string::npos);
        if (!name.starts_with("checkpoint-")) continue;
        ++checkpoints;
        REQUIRE(fs::exists(e.path() / "run_state.json"));
        CHECK(ordered_json::parse(read_text(e.path() / "run_state.json"))["arguments"]["--lr"] == "0.001");  // the first run's
    }
    CHECK(checkpoints >= 2);  // checkpoint-500 and the one SIGTERM wrote
}

// ------------------------------------------------------------------------------------------------
// 3. Plot logs
// ------------------------------------------------------------------------------------------------

namespace {

struct PlotFiles {
    fs::path folder, log, out;
};
// A log holding `text` and an earlier picture, in a folder that a refusal must leave as it was.
PlotFiles plot_files(const std::string& name, const std::string& text) {
    const fs::path folder = place("plot/" + name);
    PlotFiles f{folder, folder / "run.jsonl", folder / "curve.svg"};
    write_text(f.log, text);
    write_text(f.out, "<svg>an earlier picture</svg>\n");
    return f;
}
const std::string first_line = "{\"step\":1,\"tokens\":16,\"loss\":5.5}\n";

}  // namespace

TEST_CASE("3. plot logs: NaN and infinities, numbers past a double, binary garbage, no final newline, an empty file") {
    const auto refused_plot = [](const std::string& name, const std::string& text, const std::string& message) {
        const auto shown = name;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        const PlotFiles f = plot_files(name, text);
        refused({"plot", f.log.string(), "-o", f.out.string()}, {f.log.string() + ": " + message}, {f.folder});
    };
    // remat's own logs write a non-finite number as null; JSON has no NaN or Infinity.
    refused_plot("nan", first_line + "{\"step\":2,\"tokens\":32,\"loss\":NaN}\n", "line 2 is not valid JSON (column 30)");
    refused_plot("infinity", first_line + "{\"step\":2,\"tokens\":32,\"loss\":Infinity}\n", "line 2 is not valid JSON (column 30)");
    refused_plot("nan-string", first_line + "{\"step\":2,\"tokens\":32,\"loss\":\"nan\"}\n", "line 2: \"loss\" must be a number, got \"nan\"");
    refused_plot("1e999", first_line + "{\"step\":2,\"tokens\":32,\"loss\":1e999}\n", "line 2 is not valid JSON (column 34)");
    refused_plot("tokens-1e300", first_line + "{\"step\":2,\"tokens\":1e300,\"loss\":4}\n", "line 2: \"tokens\" must be a whole number, got 1e+300");
    refused_plot("tokens-2e64", first_line + "{\"step\":2,\"tokens\":18446744073709551616,\"loss\":4}\n",
                 "line 2: \"tokens\" must be a whole number, got 1.8446744073709552e+19");
    refused_plot("empty", "", "nothing to plot (no line with \"step\", \"tokens\" and \"loss\" or \"valid_loss\")");
    refused_plot("not-utf8", "\xff\xfe\x80garbage\x1b[31m", "line 1 is not valid JSON (column 1)");
    std::mt19937 random(7);
    std::string garbage(3000, '\0');
    for (char& c : garbage) c = static_cast<char>(random() & 0xff);
    const PlotFiles g = plot_files("binary", garbage);
    refused({"plot", g.log.string(), "-o", g.out.string()}, {g.log.string() + ": line ", " is not valid JSON"}, {g.folder});
}

namespace {
// Draws the log into a new picture: exit code 0, the earlier picture untouched, and a picture that
// stays a picture — a diverged loss is a real loss to draw, so every coordinate must be finite.
Timed drawn(const std::string& name, const std::string& text) {
    const auto shown = name;  // clang 14: no lambda (CAPTURE) captures a structured binding
    CAPTURE(shown);
    const PlotFiles f = plot_files(name, text);
    const fs::path out = f.folder / "new.svg";
    const Timed t = accepted({"plot", f.log.string(), "-o", out.string()});
    const std::string svg = read_text(out);
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
    CHECK(read_text(f.out) == "<svg>an earlier picture</svg>\n");
    return t;
}
}  // namespace

TEST_CASE("3. plot logs that are right to draw: huge losses, no final newline, a line cut by a running writer") {
    drawn("huge", first_line + "{\"step\":2,\"tokens\":32,\"loss\":1e308}\n");
    drawn("huge-negative", first_line + "{\"step\":2,\"tokens\":32,\"loss\":-1e308}\n");
    drawn("huge-valid-loss", "{\"step\":1,\"tokens\":16,\"loss\":5.5,\"valid_loss\":1e308}\n{\"step\":2,\"tokens\":32,\"loss\":4}\n");
    drawn("most-tokens", first_line + "{\"step\":2,\"tokens\":18446744073709551615,\"loss\":4}\n");
    const Timed whole = drawn("no-final-newline", first_line + "{\"step\":2,\"tokens\":32,\"loss\":4}");
    CHECK(whole.result.out.find("2 training and 0 validation losses from 1 log") != std::string::npos);
    // A line without its end is what a run still writing leaves: left out, with a warning.
    const Timed cut = drawn("cut-line", first_line + "{\"step\":2,\"tokens\":32,\"lo");
    CHECK(cut.result.err.find("line 2 is incomplete (a run still writing?); left out") != std::string::npos);
}

TEST_CASE("3. a log whose losses span -1e308 to 1e308 draws a finite picture") {
    // The axis range overflows a double: it must still give finite coordinates (not "-nan").
    drawn("span-of-all-doubles", "{\"step\":1,\"tokens\":16,\"loss\":1e308}\n{\"step\":2,\"tokens\":32,\"loss\":-1e308}\n");
    drawn("span-with-validation", "{\"step\":1,\"tokens\":16,\"loss\":5.5,\"valid_loss\":-1e308}\n{\"step\":2,\"tokens\":32,\"loss\":1e308}\n");
}

// ------------------------------------------------------------------------------------------------
// 4. Checkpointing texts: budgets and plan strings
// ------------------------------------------------------------------------------------------------

namespace {
const std::string sizes = " (expected a number and a unit: B, KB, MB, GB, TB or KiB, MiB, GiB, TiB, as in 11GB or 4.5GiB)";
const fs::path tiny = fixtures / "gpt2-tiny";  // 2 blocks
}  // namespace

TEST_CASE("4. budget texts: 0, -5MB, 1e999, abc, through remat run, train and plan") {
    const RunFiles io = run_files();
    base_run();
    const std::vector<std::pair<std::string, std::string>> budgets = {
        {"0", "memory size \"0\": no unit"}, {"-5MB", "memory size \"-5MB\": no number"},
        {"1e999", "memory size \"1e999\": unknown unit \"e999\""}, {"abc", "memory size \"abc\": no number"}};
    for (const auto& [budget, message] : budgets) {
        const auto shown = budget;  // clang 14: no lambda (CAPTURE) captures a structured binding
        CAPTURE(shown);
        refused({"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string(), "--checkpoint", "budget:" + budget},
                {"--checkpoint: " + message + sizes}, {io.folder});
        const fs::path save = runs() / "budget-save";
        refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "2", "--batch", "2", "--seq", "8",
                 "--checkpoint", "budget:" + budget, "--save", save.string()},
                {"--checkpoint: " + message + sizes}, {run_model(), save});
        refused({"plan", tiny.string(), "--batch", "2", "--seq", "8", "--budget", budget}, {"--budget: " + message + sizes});
    }
    // A budget no plan meets: run refuses, naming the smallest that fits.
    refused({"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string(), "--checkpoint", "budget:1B"},
            {"--checkpoint budget:1B: no checkpointing plan fits 1 bytes of activations for this model and batch; the smallest that fits is "},
            {io.folder});
    // remat plan is a report: "no plan fits" is its answer to print, with exit code 0.
    const Timed plan = accepted({"plan", tiny.string(), "--batch", "2", "--seq", "8", "--budget", "1B"});
    CHECK(plan.result.out.find("no plan fits budget:1B; the smallest budget that fits is ") != std::string::npos);
}

TEST_CASE("4. an empty --budget is refused, as an empty budget: is, not read as no budget") {
    refused({"plan", tiny.string(), "--batch", "2", "--seq", "8", "--budget", ""}, {"--budget", "memory size \"\""});
}

TEST_CASE("4. plan strings that do not match the model's blocks") {
    const RunFiles io = run_files();
    const auto run_with = [&](const std::string& plan) {
        return std::vector<std::string>{"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string(), "--checkpoint", plan};
    };
    refused(run_with("plan:3n"), {"checkpoint plan plan:3n is for 3 blocks; the model has 2"}, {io.folder});
    refused(run_with("plan:1g"), {"is for 1 blocks; the model has 2"}, {io.folder});
    refused(run_with("plan:0n"), {"--checkpoint: checkpoint plan 'plan:0n': expected a letter n, s, c or g after a count ≥ 1 at character 6"},
            {io.folder});
    refused(run_with("plan:99999999999999999999n"), {"--checkpoint: checkpoint plan 'plan:99999999999999999999n': a count is too large"},
            {io.folder});
    base_run();
    refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "2", "--batch", "2", "--seq", "8", "--checkpoint",
             "plan:3n"},
            {"checkpoint plan plan:3n is for 3 blocks; the model has 1"}, {run_model()});
}

TEST_CASE("4. a train refused for its plan string leaves no --save folder behind") {
    // "nothing is written" (docs/cli.md, Errors): the folder is made before the plan is checked
    // against the model, and stays, empty, after the refusal.
    base_run();
    const fs::path save = runs() / "plan-save";
    fs::remove_all(save);
    refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "2", "--batch", "2", "--seq", "8", "--checkpoint",
             "plan:3n", "--save", save.string()},
            {"checkpoint plan plan:3n is for 3 blocks; the model has 1"}, {run_model(), save});
}

// ------------------------------------------------------------------------------------------------
// 5. mpirun: ranks started with different arguments
// ------------------------------------------------------------------------------------------------

namespace {

// Two ranks in mpirun's MPMD form, each with its own arguments after the shared ones:
// mpirun -np 1 remat train … --lr 0.001 : -np 1 remat train … --lr 0.002
Timed two_ranks(const std::vector<std::string>& rank0, const std::vector<std::string>& rank1) {
    base_run();  // the model and text, made by one process before mpirun
    const char* remat = std::getenv("REMAT_BIN");
    REQUIRE(remat != nullptr);
    const auto with = [](const std::vector<std::string>& own) {
        std::vector<std::string> a = {"train", run_model().string(), "--data", run_text().string(), "--batch", "2", "--seq", "8"};
        a.insert(a.end(), own.begin(), own.end());
        return a;
    };
    std::vector<std::string> args = with(rank0);
    args.insert(args.end(), {":", "-np", "1", remat});
    const auto second = with(rank1);
    args.insert(args.end(), second.begin(), second.end());
    UnderMpirun one_each(1);
    auto& launcher = remat_launcher();
    *std::next(std::find(launcher.begin(), launcher.end(), "--timeout")) = "20";  // a hang costs 20 s, not 110
    return run_within(args, 40);
}

}  // namespace

TEST_CASE("5. mpirun ranks started with different arguments are refused before the first step, the difference named") {
    const fs::path save = runs() / "ranks";
    struct Difference {
        std::string name;
        std::vector<std::string> rank0, rank1, named;
    };
    const std::vector<Difference> differences = {
        {"--lr", {"--steps", "4", "--lr", "0.001"}, {"--steps", "4", "--lr", "0.002"}, {"--lr", "0.001", "0.002"}},
        {"--seed", {"--steps", "4", "--seed", "1"}, {"--steps", "4", "--seed", "2"}, {"--seed", "1", "2"}},
        // Different lengths once left rank 0 finished and rank 1 waiting for a sum that never came.
        {"--steps", {"--steps", "4"}, {"--steps", "6"}, {"--steps", "4", "6"}},
        // Rank 0 alone saves: a rank given a --save that rank 0 lacks expects a folder never written.
        {"--save", {"--steps", "4"}, {"--steps", "4", "--save", save.string()}, {"--save"}},
    };
    for (const Difference& d : differences) {
        SUBCASE(d.name.c_str()) {
            fs::remove_all(save);
            const Timed t = two_ranks(d.rank0, d.rank1);
            const std::string out = t.result.out.substr(0, 300);
            CAPTURE(out);
            CAPTURE(t.result.err);
            CHECK(t.result.code == 2);
            CHECK(t.result.out.empty());  // no header, no step
            CHECK(t.seconds < 15);
            // Besides mpirun's own notice, every error line names the flag and both ranks' values.
            std::size_t errors = 0;
            std::stringstream in(t.result.err);
            for (std::string line; std::getline(in, line);) {
                if (!line.starts_with("error: ")) continue;
                ++errors;
                CAPTURE(line);
                CHECK(contains(line, d.named.front()));
                for (std::size_t i = 1; i < d.named.size(); ++i) CHECK(contains(line, value(d.named[i])));
            }
            CHECK(errors >= 1);
            CHECK_FALSE(fs::exists(save / "model.safetensors"));
        }
    }
}

TEST_CASE("5. mpirun ranks may differ in --checkpoint: every policy computes the same bits") {
    // As on resume (docs/training.md: --checkpoint may change), a rank on a node with less memory may
    // recompute more without changing the run.
    const Timed t = two_ranks({"--steps", "4", "--checkpoint", "blocks"}, {"--steps", "4"});
    CAPTURE(t.result.err);
    CHECK(t.result.code == 0);
    CHECK(t.seconds < 15);
}

// ------------------------------------------------------------------------------------------------
// 6. REMAT_NUM_THREADS
// ------------------------------------------------------------------------------------------------

// Decided as a PyTorch / OpenMP user expects: a thread count must be a whole number of at least 1
// (torch.set_num_threads(0) raises; Intel's OpenMP reports a bad OMP_NUM_THREADS), so 0, -1 and
// text are refused by name on every command, not silently replaced by the default. An empty value
// is the variable unset, as a shell's `VAR= cmd` means. A count far above the cores is the user's
// choice (OpenMP oversubscribes when asked): remat runs with as many threads as it can start, at most
// a bound it names in a warning, and never hangs or aborts when a thread cannot be started.
TEST_CASE("6. REMAT_NUM_THREADS: 0, -1, text refused by name; empty is unset; huge is capped with a warning") {
    const RunFiles io = run_files();
    for (const std::string bad : {"0", "-1", "abc", "2abc"}) {
        SUBCASE(("REMAT_NUM_THREADS=" + bad).c_str()) {
            const ScopedEnv threads("REMAT_NUM_THREADS", bad);
            refused({"info", tiny.string()}, {"REMAT_NUM_THREADS", value(bad)});
            refused({"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string()}, {"REMAT_NUM_THREADS", value(bad)}, {io.folder});
        }
    }
    SUBCASE("REMAT_NUM_THREADS= (empty)") {
        const ScopedEnv threads("REMAT_NUM_THREADS", "");
        CHECK(accepted({"info", tiny.string()}).result.err.empty());
        fs::remove(io.out);
        CHECK(accepted({"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string()}).result.err.empty());
        CHECK(fs::exists(io.out));
    }
    for (const std::string huge : {"100000", "99999999999999999999"}) {
        SUBCASE(("REMAT_NUM_THREADS=" + huge).c_str()) {
            const ScopedEnv threads("REMAT_NUM_THREADS", huge);
            accepted({"info", tiny.string()}, 15);
            fs::remove(io.out);
            const Timed t = accepted({"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string()}, 15);
            CHECK(t.seconds < 10);
            CHECK(fs::exists(io.out));
            CHECK(t.result.err.starts_with("warning: "));
            CHECK(contains(t.result.err, "REMAT_NUM_THREADS"));
            CHECK(contains(t.result.err, value(huge)));
        }
    }
    SUBCASE("REMAT_NUM_THREADS=200: more threads than 1 GiB of address space can start") {
        // 200 stacks of 8 MiB do not fit under the limit: the threads that start do the work.
        const ScopedEnv threads("REMAT_NUM_THREADS", "200");
        fs::remove(io.out);
        accepted({"run", tiny.string(), "--input", io.in.string(), "--out", io.out.string()}, 15);
        CHECK(fs::exists(io.out));
    }
}

// ------------------------------------------------------------------------------------------------
// 7. Paths: longer than PATH_MAX, a component longer than 255, a name starting with '-', symlink loops
// ------------------------------------------------------------------------------------------------

namespace {
struct LongPaths {
    fs::path folder, too_long, long_name;
};
LongPaths long_paths() {
    LongPaths p{place("paths"), {}, {}};
    p.too_long = p.folder;
    for (int i = 0; i < 21; ++i) p.too_long /= std::string(200, 'a');  // over PATH_MAX, 4096 bytes
    p.long_name = p.folder / std::string(300, 'b');                   // one component over NAME_MAX, 255 bytes
    return p;
}
}  // namespace

TEST_CASE("7. a path longer than PATH_MAX: the reason survives the error line's 4000-byte cut") {
    // The line is cut at 4000 bytes, and a path that long pushed the reason ("File name too long")
    // off its end: the line said only the path. A long path is shortened in the middle instead.
    const LongPaths p = long_paths();
    const RunFiles io = run_files();
    base_run();
    refused({"info", p.too_long.string()}, {"too long"}, {p.folder});
    refused({"run", tiny.string(), "--input", io.in.string(), "--out", (p.too_long / "out.safetensors").string()}, {"too long"}, {p.folder, io.folder});
    refused({"plot", (p.too_long / "run.jsonl").string(), "-o", (p.folder / "curve.svg").string()}, {"too long"}, {p.folder});
    refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "1", "--save", p.too_long.string()}, {"too long"}, {p.folder});
}

TEST_CASE("7. a path component longer than NAME_MAX: refused with errno's reason") {
    const LongPaths p = long_paths();
    const RunFiles io = run_files();
    base_run();
    const std::string name = p.long_name.string();
    refused({"run", tiny.string(), "--input", io.in.string(), "--out", name + ".safetensors"},
            {name + ".safetensors: cannot write in folder " + p.folder.string() + ": File name too long"}, {p.folder, io.folder});
    refused({"run", tiny.string(), "--input", name, "--out", io.out.string()}, {name + ": cannot read: File name too long"}, {p.folder, io.folder});
    refused({"plot", name + ".jsonl", "-o", (p.folder / "curve.svg").string()}, {name + ".jsonl: cannot read: File name too long"}, {p.folder});
    refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "1", "--save", name},
            {name + ": cannot create the folder: File name too long"}, {p.folder});
}

TEST_CASE("7. a component longer than NAME_MAX as DIR: the reason is the name's length, not 'no such file'") {
    const LongPaths p = long_paths();
    refused({"info", p.long_name.string()}, {p.long_name.string(), "too long"}, {p.folder});
}

namespace {
// Runs `body` in a folder holding a copy of gpt2-tiny named "-x" and a log named "-run.jsonl".
void in_dash_folder(const std::function<void(const fs::path& folder)>& body) {
    const fs::path folder = place("dash");
    fs::copy(tiny, folder / "-x", fs::copy_options::recursive);
    write_text(folder / "-run.jsonl", first_line);
    const fs::path before = fs::current_path();
    fs::current_path(folder);
    struct Back {
        fs::path to;
        ~Back() { fs::current_path(to); }
    } back{before};
    body(folder);
}
}  // namespace

TEST_CASE("7. a name starting with '-' given bare is an option: refused, naming it") {
    // As for every POSIX tool `-x` is an option; the error names it rather than "DIR is required".
    const RunFiles io = run_files();
    in_dash_folder([&](const fs::path& folder) {
        refused({"info", "-x"}, {"-x"}, {folder});
        refused({"run", "-x", "--input", io.in.string(), "--out", io.out.string()}, {"-x"}, {folder, io.folder});
    });
}

TEST_CASE("7. a name starting with '-' written ./-x or after -- is a path") {
    const RunFiles io = run_files();
    in_dash_folder([&](const fs::path& folder) {
        accepted({"info", "./-x"});
        accepted({"info", "--", "-x"});
        fs::remove(io.out);
        accepted({"run", "./-x", "--input", io.in.string(), "--out", io.out.string()});
        CHECK(fs::exists(io.out));
        accepted({"plot", "-o", (folder / "curve.svg").string(), "--", "-run.jsonl"});
        // An option's value may start with '-': it is the value, not another option.
        accepted({"run", tiny.string(), "--input", io.in.string(), "--out", "-out.safetensors"});
        CHECK(fs::exists(folder / "-out.safetensors"));
    });
}

namespace {
// A folder of symlink loops: loop-a -> loop-b -> loop-a, and self.safetensors and self.svg pointing
// at themselves; made afresh for each case.
fs::path loops() {
    const fs::path folder = place("loops");
    fs::create_symlink("loop-b", folder / "loop-a");
    fs::create_symlink("loop-a", folder / "loop-b");
    fs::create_symlink("self.safetensors", folder / "self.safetensors");
    fs::create_symlink("self.svg", folder / "self.svg");
    write_text(folder / "run.jsonl", first_line);
    return folder;
}
}  // namespace

TEST_CASE("7. symlink loops") {
    const RunFiles io = run_files();
    base_run();
    SUBCASE("as DIR: named as a loop, not as missing") {
        const fs::path folder = loops();
        const std::string loop = (folder / "loop-a").string();
        refused({"info", loop}, {loop, "symbolic link"}, {folder});
        refused({"run", loop, "--input", io.in.string(), "--out", io.out.string()}, {loop, "symbolic link"}, {folder, io.folder});
    }
    SUBCASE("as --data: named as a loop, not as missing") {
        const fs::path folder = loops();
        const std::string loop = (folder / "loop-a").string();
        refused({"train", run_model().string(), "--data", loop, "--steps", "1"}, {loop, "symbolic link"}, {folder});
    }
    SUBCASE("as --out: refused, the link left as it was") {
        // A looping symlink is neither absent nor a regular file: replacing it with the output
        // destroys what the user made there.
        const fs::path folder = loops();
        for (const char* name : {"loop-a", "self.safetensors"}) {
            const std::string out = (folder / name).string();
            refused({"run", tiny.string(), "--input", io.in.string(), "--out", out}, {out, "symbolic link"}, {folder, io.folder});
        }
    }
    SUBCASE("as plot's -o: refused, the link left as it was") {
        const fs::path folder = loops();
        const std::string out = (folder / "self.svg").string();
        refused({"plot", (folder / "run.jsonl").string(), "-o", out}, {out, "symbolic link"}, {folder});
    }
    SUBCASE("as --input, --save and --log: errno's reason") {
        const fs::path folder = loops();
        const std::string self = (folder / "self.safetensors").string(), loop = (folder / "loop-a").string();
        refused({"run", tiny.string(), "--input", self, "--out", io.out.string()}, {self + ": cannot read: Too many levels of symbolic links"},
                {folder, io.folder});
        refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "1", "--save", loop},
                {loop + ": cannot create the folder: Too many levels of symbolic links"}, {folder});
        refused({"train", run_model().string(), "--data", run_text().string(), "--steps", "1", "--log", loop},
                {loop + ": cannot write: Too many levels of symbolic links"}, {folder});
    }
}
