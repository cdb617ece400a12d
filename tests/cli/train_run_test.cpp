// `remat train` as a training run (docs/training.md): killed with SIGKILL between saves and during
// a save, stopped with SIGTERM, and resumed — bitwise the uninterrupted run, losses and weights, with
// dropout on, accumulation, under policies none and blocks; validation; the non-finite stop; the
// errors of a run's arguments.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/inotify.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/cli/run_remat.hpp"

namespace {

// A byte-level GPT-2 with HF's default dropout (0.1), and a text of a few thousand tokens.
const fs::path& model() {
    static const fs::path dir = [] {
        const fs::path d = scratch() / "model";
        const Result r = run_remat({"init", d.string(), "--arch", "gpt2", "--n-layer", "2", "--n-embd", "32", "--n-head",
                                    "4", "--vocab-size", "256", "--n-positions", "64", "--seed", "3"});
        REQUIRE(r.code == 0);
        return d;
    }();
    return dir;
}
const fs::path& text() {
    static const fs::path path = [] {
        std::string t;
        for (int i = 0; i < 40; ++i)
            t += "Paragraph " + std::to_string(i) + ": it was the best of times, it was the worst of times, it was the "
                 "age of wisdom, it was the age of foolishness.\n";
        write_text(scratch() / "text.txt", t);
        return scratch() / "text.txt";
    }();
    return path;
}

std::vector<std::string> run_args(const std::string& policy, const fs::path& out, const std::string& save_every) {
    return {"train", model().string(), "--data", text().string(), "--steps", "24", "--batch", "2", "--seq", "32",
            "--accumulate", "2", "--lr", "3e-3", "--warmup", "3", "--schedule", "cosine", "--weight-decay", "0.1",
            "--checkpoint", policy, "--save", out.string(), "--save-every", save_every, "--log",
            (out.string() + ".jsonl")};
}

// Starts $REMAT_BIN without waiting: stdout to OUT.stdout, stderr discarded.
pid_t spawn_remat(const std::vector<std::string>& args, const fs::path& out) {
    return start_remat(args, {out.string() + ".stdout"}, {"/dev/null", O_WRONLY});
}

int wait_status(pid_t pid) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return status;
}

std::size_t log_lines(const fs::path& log) {
    const std::string t = read_text(log);
    return static_cast<std::size_t>(std::count(t.begin(), t.end(), '\n'));
}

// What must match between two runs' logs: everything but the timings.
std::vector<std::string> computed(const fs::path& log) {
    std::vector<std::string> out;
    std::stringstream in(read_text(log));
    for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line);
        j.erase("tokens_per_second");
        j.erase("peak_activation_bytes");
        j.erase("communication_seconds");  // data parallel runs' timing
        out.push_back(j.dump());
    }
    return out;
}

bool has_partial_folder(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().ends_with(".partial")) return true;
    return false;
}

// The uninterrupted run every interrupted one must equal.
const fs::path& reference() {
    static const fs::path out = [] {
        const fs::path o = scratch() / "reference";
        const Result r = run_remat(run_args("none", o, "4"));
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        return o;
    }();
    return out;
}

void check_same_as_reference(const fs::path& out) {
    CHECK(read_text(out / "model.safetensors") == read_text(reference() / "model.safetensors"));
    CHECK(computed(out.string() + ".jsonl") == computed(reference().string() + ".jsonl"));
}

void resume(const std::string& policy, const fs::path& out, const std::string& save_every) {
    auto args = run_args(policy, out, save_every);
    args.insert(args.end(), {"--resume", out.string()});
    const Result r = run_remat(args);
    CAPTURE(r.out);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("resuming from " + out.string() + "/checkpoint-") != std::string::npos);
}

}  // namespace

TEST_CASE("a run killed between saves resumes bitwise: the same losses at every step, the same weights") {
    for (const char* policy : {"none", "blocks"}) {
        CAPTURE(policy);
        const fs::path out = scratch() / ("between-" + std::string(policy));
        const pid_t pid = spawn_remat(run_args(policy, out, "4"), out);
        while (log_lines(out.string() + ".jsonl") < 10) std::this_thread::sleep_for(std::chrono::microseconds(200));
        ::kill(pid, SIGKILL);
        const int status = wait_status(pid);
        REQUIRE(WIFSIGNALED(status));  // killed, not finished
        CHECK_FALSE(fs::exists(out / "model.safetensors"));
        resume(policy, out, "4");
        check_same_as_reference(out);
    }
}

TEST_CASE("a run killed during a save resumes bitwise from the last complete checkpoint") {
    for (const char* policy : {"none", "blocks"}) {
        CAPTURE(policy);
        bool killed_in_a_save = false;
        for (int attempt = 0; attempt < 20 && !killed_in_a_save; ++attempt) {
            const fs::path out = scratch() / ("during-" + std::string(policy) + "-" + std::to_string(attempt));
            fs::create_directories(out);
            const int watch = ::inotify_init1(IN_CLOEXEC);
            REQUIRE(watch >= 0);
            REQUIRE(::inotify_add_watch(watch, out.c_str(), IN_CREATE) >= 0);
            const pid_t pid = spawn_remat(run_args(policy, out, "1"), out);
            // Kill at the first folder created after step 5: a ".checkpoint-N.partial" being filled.
            alignas(inotify_event) char events[4096];
            for (bool done = false; !done;) {
                const ssize_t n = ::read(watch, events, sizeof events);
                REQUIRE(n > 0);
                for (char* p = events; p < events + n; p += sizeof(inotify_event) + reinterpret_cast<inotify_event*>(p)->len) {
                    const auto* e = reinterpret_cast<inotify_event*>(p);
                    const std::string name = e->len ? e->name : "";
                    if (name.ends_with(".partial") && name > ".checkpoint-5") {
                        ::kill(pid, SIGKILL);
                        done = true;
                        break;
                    }
                }
            }
            ::close(watch);
            const int status = wait_status(pid);
            REQUIRE(WIFSIGNALED(status));
            killed_in_a_save = has_partial_folder(out);  // the save was cut short
            if (!killed_in_a_save) continue;            // it had finished: try again
            resume(policy, out, "1");
            check_same_as_reference(out);
        }
        CHECK(killed_in_a_save);
    }
}

TEST_CASE("SIGTERM: the step finishes, a checkpoint is written, the line says how to resume") {
    const fs::path out = scratch() / "term";
    const pid_t pid = spawn_remat(run_args("blocks", out, "100"), out);
    while (log_lines(out.string() + ".jsonl") < 5) std::this_thread::sleep_for(std::chrono::microseconds(200));
    ::kill(pid, SIGTERM);
    const int status = wait_status(pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
    const std::string printed = read_text(out.string() + ".stdout");
    CAPTURE(printed);
    const auto at = printed.find("stopped by SIGTERM after step ");
    REQUIRE(at != std::string::npos);
    const int step = std::stoi(printed.substr(at + 30));
    CHECK(has_line(printed, "stopped by SIGTERM after step " + std::to_string(step) + ": saved " +
                                (out / ("checkpoint-" + std::to_string(step))).string() +
                                "; resume with the same arguments and --resume " + out.string()));
    resume("blocks", out, "100");
    check_same_as_reference(out);
}

TEST_CASE("validation: loss and perplexity at the intervals and the end; too little data is an error") {
    const fs::path out = scratch() / "valid";
    const Result r = run_remat({"train", model().string(), "--data", text().string(), "--valid", text().string(),
                                "--valid-windows", "5", "--validate-every", "3", "--steps", "7", "--batch", "2", "--seq",
                                "32", "--log", (out.string() + ".jsonl")});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(has_line(r.out, "validation: " + text().string() + ": 5 of 154 windows, every 3 steps and at the end"));
    for (const char* step : {"3", "6", "7"})
        CHECK(r.out.find(std::string("validation at step ") + step + ": loss ") != std::string::npos);
    std::size_t validated = 0;
    std::stringstream in(read_text(out.string() + ".jsonl"));
    for (std::string line; std::getline(in, line);) {
        const auto j = nlohmann::json::parse(line);
        if (!j.contains("valid_loss")) continue;
        ++validated;
        CHECK(j["valid_perplexity"].get<double>() == doctest::Approx(std::exp(j["valid_loss"].get<double>())));
    }
    CHECK(validated == 3);

    write_text(scratch() / "empty.txt", "");
    const std::string m = model().string(), d = text().string(), empty = (scratch() / "empty.txt").string();
    check_error({"train", m, "--data", d, "--valid", empty, "--seq", "32"},
                empty + ": 0 tokens are fewer than one window of 32 (--seq); give more data or a smaller --seq");
    write_text(scratch() / "short.txt", "short");
    check_error({"train", m, "--data", d, "--valid", (scratch() / "short.txt").string(), "--seq", "32"},
                (scratch() / "short.txt").string() + ": 5 tokens are fewer than one window of 32 (--seq); give more data or a smaller --seq");
}

TEST_CASE("a non-finite loss stops the run: exit 2, one error line, the final model not written") {
    const fs::path out = scratch() / "diverged";
    // T 64: attention blocks narrower than the keys, where NaN scores once crashed the softmax.
    const Result r = run_remat({"train", model().string(), "--data", text().string(), "--steps", "10", "--batch", "4",
                                "--seq", "64", "--lr", "1e30", "--clip", "0", "--save", out.string(), "--save-every", "1"});
    CAPTURE(r.out);
    CAPTURE(r.err);
    CHECK(r.code == 2);
    // stderr: the raw-bytes warning of the start, then the one error line.
    const std::string error = r.err.substr(r.err.find("\nerror: ") + 1);
    REQUIRE(error.starts_with("error: step "));
    CHECK(std::count(error.begin(), error.end(), '\n') == 1);
    CHECK((error.find(" is nan") != std::string::npos || error.find(" is infinite") != std::string::npos));
    CHECK(error.find("; stopped (") != std::string::npos);
    CHECK(r.err.find(out.string() + " keeps only its earlier checkpoints); try a lower --lr or --clip") != std::string::npos);
    CHECK_FALSE(fs::exists(out / "model.safetensors"));
    CHECK(fs::exists(out / "checkpoint-1" / "model.safetensors"));
}

TEST_CASE("the run's arguments: contradictions and a changed resume are errors naming the argument") {
    const std::string m = model().string(), d = text().string();
    check_error({"train", m, "--data", d, "--steps", "2", "--epochs", "1"}, "give --steps or --epochs, not both");
    check_error({"train", m, "--data", d, "--keep", "2"}, "--save-every and --keep need --save");
    check_error({"train", m, "--data", d, "--validate-every", "2"}, "--validate-every needs --valid");
    check_error({"train", m, "--data", d, "--epochs", "9223372036854775807"},
                "--epochs must be a whole number from 1 to 1000000, got \"9223372036854775807\"");
    check_error({"train", m, "--data", d, "--schedule", "steep"}, "--schedule must be constant, linear or cosine, got \"steep\"");
    check_error({"train", m, "--data", d, "--lr", "1e-3", "--min-lr", "1e-2"}, "--min-lr 0.01 is above --lr 0.001");
    check_error({"train", m, "--data", d, "--seq", "64", "--batch", "100", "--epochs", "1"},
                d + ": 77 windows of 64 tokens make less than one step of 100 windows (--batch x --accumulate) in 1 epoch(s); "
                    "give more data, more --epochs, or --steps");
    const fs::path empty = scratch() / "no-checkpoints";
    fs::create_directories(empty);
    check_error({"train", m, "--data", d, "--resume", empty.string()},
                empty.string() + ": --resume: the folder holds no complete checkpoint-N folder (nor run_state.json)");

    auto args = run_args("none", reference(), "4");
    for (auto& a : args)
        if (a == "3e-3") a = "1e-3";
    args.insert(args.end(), {"--resume", (reference() / "checkpoint-8").string()});
    check_error(args, "--lr 0.001 differs from the run being resumed (0.003 in " + (reference() / "checkpoint-8").string() +
                          "); give the original run's arguments (only --log, --log-every, --save-every, --keep, "
                          "--validate-every and --checkpoint may change)");
}

TEST_CASE("--precision bf16: checkpointing changes no bit, a killed run resumes bitwise, the precision is part of the run") {
    auto with_bf16 = [](std::vector<std::string> args) {
        args.insert(args.end(), {"--precision", "bf16"});
        return args;
    };
    const fs::path plain = scratch() / "bf16-none", out = scratch() / "bf16-blocks";
    const Result r = run_remat(with_bf16(run_args("none", plain, "4")));
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find(", bf16 products") != std::string::npos);
    CHECK(read_text(plain / "model.safetensors") != read_text(reference() / "model.safetensors"));  // bf16 really ran

    const pid_t pid = spawn_remat(with_bf16(run_args("blocks", out, "4")), out);
    while (log_lines(out.string() + ".jsonl") < 10) std::this_thread::sleep_for(std::chrono::microseconds(200));
    ::kill(pid, SIGKILL);
    REQUIRE(WIFSIGNALED(wait_status(pid)));
    auto args = with_bf16(run_args("blocks", out, "4"));
    args.insert(args.end(), {"--resume", out.string()});
    const Result resumed = run_remat(args);
    CAPTURE(resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(read_text(out / "model.safetensors") == read_text(plain / "model.safetensors"));
    CHECK(computed(out.string() + ".jsonl") == computed(plain.string() + ".jsonl"));

    auto in_fp32 = run_args("none", plain, "4");
    in_fp32.insert(in_fp32.end(), {"--resume", (plain / "checkpoint-8").string()});
    check_error(in_fp32, "--precision fp32 differs from the run being resumed (bf16 in " + (plain / "checkpoint-8").string() +
                             "); give the original run's arguments (only --log, --log-every, --save-every, --keep, "
                             "--validate-every and --checkpoint may change)");
    check_error({"train", model().string(), "--data", text().string(), "--precision", "fp16"},
                "--precision: unknown precision 'fp16': expected fp32 or bf16");
    check_error({"train", model().string(), "--data", text().string(), "--gradient-sum", "later"},
                "--gradient-sum: expected during-backward or after-backward, got 'later'");
    check_error({"train", model().string(), "--data", text().string(), "--bucket-size", "lots"},
                "--bucket-size: memory size \"lots\": no number (expected a number and a unit: B, KB, MB, GB, TB or KiB, "
                "MiB, GiB, TiB, as in 11GB or 4.5GiB)");
}

namespace {
// run_args with one micro-batch per step: under mpirun -np 2, the two ranks' micro-batches make the
// reference's --accumulate 2.
std::vector<std::string> one_per_rank(const std::string& policy, const fs::path& out) {
    auto args = run_args(policy, out, "4");
    *std::next(std::find(args.begin(), args.end(), "--accumulate")) = "1";
    return args;
}

// remat under mpirun -np `ranks`.
Result run_on_ranks(int ranks, const std::vector<std::string>& args) {
    UnderMpirun launcher(ranks);
    return run_remat(args);
}

// The processes `pid` has started (mpirun's ranks).
std::vector<pid_t> children_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    std::vector<pid_t> out;
    for (pid_t child; in >> child;) out.push_back(child);
    return out;
}
}  // namespace

TEST_CASE("mpirun -np 2 is bitwise one process with --accumulate 2: dropout, none and blocks, validation split") {
    for (const char* policy : {"none", "blocks"}) {
        CAPTURE(policy);
        const fs::path out = scratch() / ("ranks-" + std::string(policy));
        auto args = one_per_rank(policy, out);
        args.insert(args.end(), {"--valid", text().string(), "--validate-every", "12"});
        Result r;
        {
            UnderMpirun two(2);
            r = run_remat(args);
        }
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(read_text(out / "model.safetensors") == read_text(reference() / "model.safetensors"));
        std::vector<std::string> ours = computed(out.string() + ".jsonl"), theirs = computed(reference().string() + ".jsonl");
        REQUIRE(ours.size() == theirs.size());
        for (std::size_t i = 0; i < ours.size(); ++i) {  // the reference has no validation: compare the rest
            auto a = nlohmann::json::parse(ours[i]);
            a.erase("valid_loss");
            a.erase("valid_perplexity");
            CHECK(a.dump() == theirs[i]);
        }
        // Rank 0 alone reports: one header, one line per validation.
        CHECK(r.out.find("training: 24 steps of 2 ranks x 1 x 2 windows of 32 tokens") != std::string::npos);
        std::size_t validations = 0;
        for (std::size_t at = 0; (at = r.out.find("validation at step", at)) != std::string::npos; ++at) ++validations;
        CHECK(validations == 2);
    }
    // The validation loss is one process's too.
    const fs::path single = scratch() / "ranks-valid-single";
    auto args = run_args("none", single, "4");
    args.insert(args.end(), {"--valid", text().string(), "--validate-every", "12"});
    REQUIRE(run_remat(args).code == 0);
    CHECK(computed(single.string() + ".jsonl") == computed((scratch() / "ranks-none").string() + ".jsonl"));
}

TEST_CASE("mpirun -np 2: small buckets summed during backward, or the sum after it: the same bits") {
    // The test model's gradients fit one default (4MiB) bucket; 4KB makes dozens, which start while backward runs.
    for (const std::vector<std::string>& how : {std::vector<std::string>{"--bucket-size", "4KB"},
                                                std::vector<std::string>{"--gradient-sum", "after-backward", "--bucket-size", "1KB"}}) {
        CAPTURE(how[1]);
        const fs::path out = scratch() / ("ranks-buckets-" + how[1]);
        auto args = one_per_rank("blocks", out);
        args.insert(args.end(), how.begin(), how.end());
        Result r;
        {
            UnderMpirun two(2);
            r = run_remat(args);
        }
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(read_text(out / "model.safetensors") == read_text(reference() / "model.safetensors"));
        CHECK(computed(out.string() + ".jsonl") == computed(reference().string() + ".jsonl"));
    }
}

TEST_CASE("mpirun -np 2: an error ends every rank with exit code 2 and says which rank saw it") {
    const std::string folder = model().string();  // made by one process, before mpirun
    UnderMpirun two(2);
    const Result r = run_remat({"train", folder, "--data", (scratch() / "missing.txt").string(), "--steps", "2"});
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("error: rank 0: " + (scratch() / "missing.txt").string() + ": no such file or folder\n") != std::string::npos);
}

TEST_CASE("mpirun -np 2: a killed rank ends the run, non-zero and without hanging; the resumed run is bitwise") {
    const fs::path out = scratch() / "ranks-killed";
    pid_t mpirun = 0;
    const auto args = one_per_rank("blocks", out);  // the model made by one process, before mpirun
    {
        UnderMpirun two(2);
        mpirun = spawn_remat(args, out);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (log_lines(out.string() + ".jsonl") < 10 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::vector<pid_t> ranks = children_of(mpirun);
    REQUIRE(ranks.size() == 2);
    const auto killed_at = std::chrono::steady_clock::now();
    ::kill(ranks.back(), SIGKILL);
    const int status = wait_status(mpirun);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    MESSAGE("mpirun ended " << seconds << " s after a rank was killed");
    CHECK(seconds < 30);
    CHECK(((WIFEXITED(status) && WEXITSTATUS(status) != 0) || WIFSIGNALED(status)));
    CHECK_FALSE(fs::exists(out / "model.safetensors"));
    {
        auto resume = args;
        resume.insert(resume.end(), {"--resume", out.string()});
        const Result r = run_on_ranks(2, resume);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
    }
    check_same_as_reference(out);
    // The number of ranks is part of the run.
    auto alone = one_per_rank("blocks", out);
    alone.insert(alone.end(), {"--resume", (out / "checkpoint-8").string()});
    check_error(alone, "--accumulate x ranks 1 differs from the run being resumed (2 in " + (out / "checkpoint-8").string() +
                           "); give the original run's arguments (only --log, --log-every, --save-every, --keep, "
                           "--validate-every and --checkpoint may change)");
}

TEST_CASE("mpirun -np 2 with --accumulate 2 each: one process's --accumulate 4 to float rounding (the sum is grouped by rank)") {
    auto args_with = [&](const fs::path& out, const std::string& accumulate) {
        auto args = run_args("none", out, "100");
        *std::next(std::find(args.begin(), args.end(), "--accumulate")) = accumulate;
        return args;
    };
    const fs::path four = scratch() / "accumulate-4", two_by_two = scratch() / "ranks-accumulate-2";
    REQUIRE(run_remat(args_with(four, "4")).code == 0);
    {
        const auto args = args_with(two_by_two, "2");
        UnderMpirun two(2);
        const Result r = run_remat(args);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
    }
    std::vector<nlohmann::json> one, two;
    for (const auto& [log, rows] : {std::pair{four, &one}, std::pair{two_by_two, &two}}) {
        std::stringstream in(read_text(log.string() + ".jsonl"));
        for (std::string line; std::getline(in, line);) rows->push_back(nlohmann::json::parse(line));
    }
    REQUIRE(one.size() == 24);
    REQUIRE(two.size() == 24);
    // The first step's loss is the same number; its gradient differs by rounding only.
    CHECK(one[0]["loss"].get<double>() == two[0]["loss"].get<double>());
    const double norm = one[0]["grad_norm"].get<double>();
    const double first = std::abs(norm - two[0]["grad_norm"].get<double>()) / norm;
    double losses = 0;
    for (std::size_t i = 0; i < 24; ++i)
        losses = std::max(losses, std::abs(one[i]["loss"].get<double>() - two[i]["loss"].get<double>()) / one[i]["loss"].get<double>());
    MESSAGE("step 1's gradient norm differs by " << first << " (relative); the 24 steps' losses by at most " << losses);
    CHECK(first < 1e-6);
    CHECK(losses < 1e-4);
}

namespace {
// The "at most R x unsharded" of a sharded run's "optimiser state per rank: …" line, and its entries.
std::pair<double, std::size_t> optimiser_share(const std::string& out) {
    const std::size_t line = out.find("optimiser state per rank: ");
    REQUIRE(line != std::string::npos);
    const std::string text = out.substr(line, out.find('\n', line) - line);
    CAPTURE(text);
    const std::size_t at = text.find("at most ");
    REQUIRE(at != std::string::npos);
    return {std::stod(text.substr(at + 8)), static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) };
}

void copy_run(const fs::path& from, const fs::path& to) {
    fs::copy(from, to, fs::copy_options::recursive);
    fs::copy_file(from.string() + ".jsonl", to.string() + ".jsonl");
}
}  // namespace

TEST_CASE("mpirun -np 2 --shard-optimizer (ZeRO-1): bitwise the unsharded run; killed, it resumes sharded or in one process, bitwise") {
    const fs::path out = scratch() / "zero-killed";
    auto args = one_per_rank("blocks", out);
    args.push_back("--shard-optimizer");
    pid_t mpirun = 0;
    {
        UnderMpirun two(2);
        mpirun = spawn_remat(args, out);
    }
    while (log_lines(out.string() + ".jsonl") < 10) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::vector<pid_t> ranks = children_of(mpirun);
    REQUIRE(ranks.size() == 2);
    ::kill(ranks.front(), SIGKILL);
    const int status = wait_status(mpirun);
    CHECK(((WIFEXITED(status) && WEXITSTATUS(status) != 0) || WIFSIGNALED(status)));
    // Each rank wrote its share of the optimiser state into the checkpoint folder.
    const fs::path eight = out / "checkpoint-8";
    CHECK(fs::is_regular_file(eight / "optimiser-rank-0-of-2.safetensors"));
    CHECK(fs::is_regular_file(eight / "optimiser-rank-1-of-2.safetensors"));
    CHECK_FALSE(fs::exists(eight / "optimiser.safetensors"));
    const fs::path in_one = scratch() / "zero-killed-one";
    copy_run(out, in_one);

    auto resume = args;
    resume.insert(resume.end(), {"--resume", out.string()});
    {
        const Result r = run_on_ranks(2, resume);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        const auto [share, commas] = optimiser_share(r.out);
        CHECK(commas == 2);  // "a, b (at most …, total)"
        CHECK(share < 0.6);
    }
    check_same_as_reference(out);

    // The two files in one process, unsharded, with the step's two micro-batches in turn.
    auto alone = run_args("blocks", in_one, "4");
    alone.insert(alone.end(), {"--resume", in_one.string()});
    const Result r = run_remat(alone);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    check_same_as_reference(in_one);
    CHECK(fs::is_regular_file(in_one / "checkpoint-20" / "optimiser.safetensors"));
}

TEST_CASE("mpirun --shard-optimizer: one process's state resumes on 2 ranks; 3 ranks in bf16 with a count 3 does not divide") {
    // The reference's checkpoint-8 (one process, one optimiser file) goes on sharded over 2 ranks.
    const fs::path out = scratch() / "zero-from-one";
    fs::create_directories(out);
    fs::copy(reference() / "checkpoint-8", out / "checkpoint-8", fs::copy_options::recursive);
    fs::copy_file(reference().string() + ".jsonl", out.string() + ".jsonl");
    auto args = one_per_rank("none", out);
    args.insert(args.end(), {"--shard-optimizer", "--resume", out.string()});
    {
        const Result r = run_on_ranks(2, args);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
    }
    check_same_as_reference(out);

    // 3 ranks, bf16 products, blocks, clipping and weight decay: one process's --accumulate 3, to the bit. The model
    // has 35,680 parameters (63 positions), which 3 does not divide.
    const fs::path model63 = scratch() / "model-63";
    REQUIRE(run_remat({"init", model63.string(), "--arch", "gpt2", "--n-layer", "2", "--n-embd", "32", "--n-head", "4", "--vocab-size",
                       "256", "--n-positions", "63", "--seed", "3"}).code == 0);
    auto three_way = [&](const fs::path& run, const std::string& accumulate, const std::string& policy) {
        auto a = run_args(policy, run, "4");
        a[1] = model63.string();
        *std::next(std::find(a.begin(), a.end(), "--accumulate")) = accumulate;
        a.insert(a.end(), {"--precision", "bf16"});
        return a;
    };
    const fs::path one = scratch() / "zero-3-reference", sharded = scratch() / "zero-3";
    const Result reference3 = run_remat(three_way(one, "3", "none"));
    REQUIRE(reference3.code == 0);
    CHECK(reference3.out.find(", 35680 parameters)") != std::string::npos);
    auto args3 = three_way(sharded, "1", "blocks");
    args3.push_back("--shard-optimizer");
    const Result r = run_on_ranks(3, args3);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(read_text(sharded / "model.safetensors") == read_text(one / "model.safetensors"));
    const std::vector<std::string> logged = computed(sharded.string() + ".jsonl");
    CHECK(logged == computed(one.string() + ".jsonl"));
    REQUIRE(!logged.empty());
    CHECK(nlohmann::json::parse(logged.front())["grad_norm"].get<double>() > 1);  // clipped: the default --clip is 1
    const auto [share, commas] = optimiser_share(r.out);
    CHECK(commas == 3);
    CHECK(share < 0.45);
    CHECK(fs::is_regular_file(sharded / "checkpoint-4" / "optimiser-rank-2-of-3.safetensors"));

    // Unsharded too, one process's x 3 goes on as 3 ranks x 1: the same sums in the same order.
    const fs::path grouped = scratch() / "zero-3-by-rank";
    copy_run(one, grouped);  // one process, --accumulate 3: in micro-batch order
    auto regrouped = three_way(grouped, "3", "none");
    regrouped.insert(regrouped.end(), {"--resume", (grouped / "checkpoint-8").string()});
    *std::next(std::find(regrouped.begin(), regrouped.end(), "--accumulate")) = "1";
    const Result fine = run_on_ranks(3, regrouped);  // 3 ranks x 1: the same order
    CAPTURE(fine.err);
    CHECK(fine.code == 0);
    CHECK(read_text(grouped / "model.safetensors") == read_text(one / "model.safetensors"));
}

TEST_CASE("--shard-optimizer: in one process a warning; a step summed in another grouping is refused on resume") {
    const fs::path out = scratch() / "zero-alone";
    auto args = run_args("none", out, "4");
    *std::next(std::find(args.begin(), args.end(), "--steps")) = "8";
    args.push_back("--shard-optimizer");
    const Result r = run_remat(args);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("warning: --shard-optimizer: this one process keeps the whole optimiser state") != std::string::npos);
    CHECK(r.out.find("optimiser state per rank") == std::string::npos);
    CHECK(fs::is_regular_file(out / "checkpoint-4" / "optimiser.safetensors"));

    // Saved by 2 ranks x 2 micro-batches (each rank's pair added first), resumed as one process x 4.
    const fs::path by_rank = scratch() / "zero-by-rank";
    auto pairs = run_args("none", by_rank, "4");
    *std::next(std::find(pairs.begin(), pairs.end(), "--steps")) = "8";
    REQUIRE(run_on_ranks(2, pairs).code == 0);
    auto four = pairs;
    *std::next(std::find(four.begin(), four.end(), "--accumulate")) = "4";
    four.insert(four.end(), {"--resume", (by_rank / "checkpoint-4").string()});
    check_error(four, "gradient sum in micro-batch order differs from the run being resumed (by rank, 2 micro-batches each in " +
                          (by_rank / "checkpoint-4").string() + "); give the original run's arguments (only --log, --log-every, "
                          "--save-every, --keep, --validate-every and --checkpoint may change)");
}

TEST_CASE("--epochs: each epoch visits every window once; --keep keeps the latest checkpoints") {
    const fs::path out = scratch() / "epochs";
    const Result r = run_remat({"train", model().string(), "--data", text().string(), "--epochs", "2", "--batch", "4",
                                "--seq", "64", "--save", out.string(), "--save-every", "10", "--keep", "2"});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    // 77 windows of 64 tokens, 2 epochs, 4 windows a step: 38 steps.
    CHECK(r.out.find("training: 38 steps of 1 x 4 windows of 64 tokens") != std::string::npos);
    CHECK(fs::exists(out / "checkpoint-20"));
    CHECK(fs::exists(out / "checkpoint-30"));
    CHECK_FALSE(fs::exists(out / "checkpoint-10"));
    CHECK(fs::exists(out / "model.safetensors"));
}

TEST_CASE("BERT: masked-LM training through the same loop, WordPiece from vocab.txt, resumed bitwise") {
    const fs::path bert = scratch() / "bert";
    REQUIRE(run_remat({"init", bert.string(), "--arch", "bert", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                       "--vocab-size", "525", "--n-positions", "32"})
                .code == 0);
    const fs::path vocab = fixtures / "wordpiece" / "uncased";
    fs::copy_file(vocab / "vocab.txt", bert / "vocab.txt");
    fs::copy_file(vocab / "tokenizer_config.json", bert / "tokenizer_config.json");
    auto args = [&](const fs::path& out) {
        return std::vector<std::string>{"train", bert.string(), "--data", text().string(), "--steps", "6", "--batch",
                                        "2", "--seq", "16", "--accumulate", "2", "--lr", "1e-3", "--save", out.string(),
                                        "--save-every", "3", "--log", out.string() + ".jsonl"};
    };
    const Result whole = run_remat(args(scratch() / "bert-whole"));
    CAPTURE(whole.err);
    REQUIRE(whole.code == 0);
    CHECK(whole.err.empty());
    CHECK(whole.out.find("windows of 14 (BERT WordPiece (vocab.txt, 525 tokens, uncased))") != std::string::npos);
    CHECK(whole.out.find("saved " + (scratch() / "bert-whole").string() + ": config.json, model.safetensors, vocab.txt, "
                                                                          "tokenizer_config.json") != std::string::npos);
    // Resumed from step 3: the same weights and losses.
    const fs::path half = scratch() / "bert-half";
    fs::create_directories(half);
    fs::copy(scratch() / "bert-whole" / "checkpoint-3", half / "checkpoint-3", fs::copy_options::recursive);
    auto resumed = args(half);
    resumed.insert(resumed.end(), {"--resume", half.string()});
    std::string log = read_text(scratch() / "bert-whole.jsonl");
    write_text(half.string() + ".jsonl", log.substr(0, log.find("{\"step\":4")));
    const Result r = run_remat(resumed);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(read_text(half / "model.safetensors") == read_text(scratch() / "bert-whole" / "model.safetensors"));
    CHECK(computed(half.string() + ".jsonl") == computed(scratch().string() + "/bert-whole.jsonl"));

    fs::create_directories(scratch() / "base");
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(bert / f, scratch() / "base" / f);
    std::string config = read_text(bert / "config.json");
    config.replace(config.find("BertForMaskedLM"), 15, "BertModel");
    write_text(scratch() / "base" / "config.json", config);
    check_error({"train", (scratch() / "base").string(), "--data", text().string()},
                (scratch() / "base" / "config.json").string() +
                    ": remat train trains models with a language-model head (GPT2LMHeadModel, BertForMaskedLM, LlamaForCausalLM, "
                    "Qwen2ForCausalLM or MistralForCausalLM); "
                    "this folder holds BertModel");
}

TEST_CASE("--data: token files and folders of them; another tokenizer's token file is refused by name") {
    const fs::path dir = scratch() / "tokens";
    fs::create_directories(dir / "folder");
    const fs::path tok = dir / "folder" / "text.tok";
    REQUIRE(run_remat({"encode", model().string(), text().string(), "-o", tok.string()}).code == 0);
    const Result from_file = run_remat({"train", model().string(), "--data", tok.string(), "--steps", "2", "--batch", "2", "--seq", "32"});
    CAPTURE(from_file.err);
    REQUIRE(from_file.code == 0);
    CHECK(from_file.out.find("data: " + tok.string() + ": 4950 tokens, 154 windows of 32") != std::string::npos);
    const Result from_folder = run_remat({"train", model().string(), "--data", (dir / "folder").string(), "--steps", "2",
                                          "--batch", "2", "--seq", "32"});
    REQUIRE(from_folder.code == 0);
    // The same windows in the same order: a token file trains exactly as its text.
    const Result from_text = run_remat({"train", model().string(), "--data", text().string(), "--steps", "2", "--batch", "2", "--seq", "32"});
    REQUIRE(from_text.code == 0);
    auto summary = [](const std::string& out) { return out.substr(out.find("loss "), out.find(", loop") - out.find("loss ")); };
    CHECK(summary(from_file.out.substr(from_file.out.find("trained"))) == summary(from_text.out.substr(from_text.out.find("trained"))));

    const fs::path bpe = dir / "bpe";
    REQUIRE(run_remat({"init", bpe.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                       "--vocab-size", "600", "--n-positions", "32"})
                .code == 0);
    for (const char* f : {"vocab.json", "merges.txt"}) fs::copy_file(fixtures / "tokenizer" / f, bpe / f);
    const Result refused = run_remat({"train", bpe.string(), "--data", tok.string(), "--seq", "16"});
    CHECK(refused.code == 2);
    CHECK(refused.err.starts_with("error: " + tok.string() + " was encoded with tokenizer cbf29ce484222325, this model's is "));
    fs::create_directories(dir / "empty");
    const Result none = run_remat({"train", model().string(), "--data", (dir / "empty").string()});
    CHECK(none.code == 2);
    CHECK(none.err.find((dir / "empty").string()) != std::string::npos);
}

namespace {

// A LoRA run of the same model and data: adapters on c_attn and c_fc with their own dropout.
std::vector<std::string> lora_args(const std::string& policy, const fs::path& out) {
    auto args = run_args(policy, out, "4");
    args.insert(args.end(), {"--lora", "r=4,alpha=8,dropout=0.1,targets=c_attn,c_fc"});
    return args;
}

const fs::path& lora_reference() {
    static const fs::path out = [] {
        const fs::path o = scratch() / "lora-reference";
        const Result r = run_remat(lora_args("none", o));
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        // PEFT's count: c_attn 4·(32 + 96) and c_fc 4·(32 + 128) in 2 blocks, of 35712 + 2304 in all.
        CHECK(has_line(r.out, "adapter: LoRA r 4 on 4 layers (c_attn,c_fc): 2304 of 38016 parameters trained (6.06 %)"));
        CHECK(has_line(r.out, "saved " + o.string() + ": adapter_config.json, adapter_model.safetensors"));
        return o;
    }();
    return out;
}

}  // namespace

TEST_CASE("LoRA: the run saves the adapter alone, in PEFT's files; checkpoints hold it, the optimiser and the run") {
    const fs::path& out = lora_reference();
    CHECK(fs::exists(out / "adapter_model.safetensors"));
    CHECK_FALSE(fs::exists(out / "model.safetensors"));
    const auto config = nlohmann::json::parse(read_text(out / "adapter_config.json"));
    CHECK(config["peft_type"] == "LORA");
    CHECK(config["r"] == 4);
    CHECK(config["lora_alpha"] == 8);
    CHECK(config["lora_dropout"] == 0.1);
    CHECK(config["target_modules"] == nlohmann::json({"c_attn", "c_fc"}));
    CHECK(config["fan_in_fan_out"] == true);  // GPT-2's Conv1D
    CHECK(config["base_model_name_or_path"] == fs::absolute(model()).lexically_normal().string());
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(out / "checkpoint-8")) files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
    CHECK(files == std::vector<std::string>{"adapter_config.json", "adapter_model.safetensors", "optimiser.safetensors",
                                            "run_state.json"});
    // The adapter trained: its file differs from the first checkpoint's.
    CHECK(read_text(out / "adapter_model.safetensors") != read_text(out / "checkpoint-4" / "adapter_model.safetensors"));
}

TEST_CASE("LoRA: a run killed between saves resumes bitwise (another policy on resume): the same losses, the same adapter") {
    const fs::path out = scratch() / "lora-killed";
    const pid_t pid = spawn_remat(lora_args("blocks", out), out);
    while (log_lines(out.string() + ".jsonl") < 10) std::this_thread::sleep_for(std::chrono::microseconds(200));
    ::kill(pid, SIGKILL);
    REQUIRE(WIFSIGNALED(wait_status(pid)));
    CHECK_FALSE(fs::exists(out / "adapter_model.safetensors"));
    auto args = lora_args("every:2", out);
    args.insert(args.end(), {"--resume", out.string()});
    const Result r = run_remat(args);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(read_text(out / "adapter_model.safetensors") == read_text(lora_reference() / "adapter_model.safetensors"));
    CHECK(computed(out.string() + ".jsonl") == computed(lora_reference().string() + ".jsonl"));
}

TEST_CASE("LoRA: --adapter goes on training an adapter; the run's LoRA settings and base are checked on resume") {
    const std::string m = model().string(), d = text().string();
    const fs::path checkpoint = lora_reference() / "checkpoint-8";
    const Result more = run_remat({"train", m, "--data", d, "--steps", "2", "--batch", "2", "--seq", "32", "--adapter",
                                   lora_reference().string(), "--save", (scratch() / "lora-more").string()});
    CAPTURE(more.err);
    REQUIRE(more.code == 0);
    CHECK(more.out.find("from " + lora_reference().string() + "\n") != std::string::npos);
    CHECK(read_text(scratch() / "lora-more" / "adapter_model.safetensors") !=
          read_text(lora_reference() / "adapter_model.safetensors"));

    check_error({"train", m, "--data", d, "--lora", "r=4", "--adapter", lora_reference().string()},
                "give --lora (a new adapter) or --adapter (one to go on training), not both");
    check_error({"train", m, "--data", d, "--lora", "r=0"}, "--lora r must be a whole number from 1 to 16384, got \"0\"");
    check_error({"train", m, "--data", d, "--lora", "rank=4"}, "--lora: unknown key \"rank\" (r, alpha, dropout, rslora, targets, regex)");
    check_error({"train", m, "--data", d, "--lora", "r=4,targets=q_proj"},
                "--lora: target modules q_proj match no linear layer of the model (its linear layers: transformer.h.0.attn.c_attn, "
                "transformer.h.0.attn.c_proj, transformer.h.0.mlp.c_fc, transformer.h.0.mlp.c_proj, transformer.h.1.attn.c_attn, "
                "transformer.h.1.attn.c_proj, transformer.h.1.mlp.c_fc, transformer.h.1.mlp.c_proj)");

    auto other_lora = lora_args("none", lora_reference());
    other_lora.back() = "r=8,alpha=8,dropout=0.1,targets=c_attn,c_fc";
    other_lora.insert(other_lora.end(), {"--resume", checkpoint.string()});
    check_error(other_lora, "--lora r=8,alpha=8,dropout=0.1,rslora=false,targets=c_attn,c_fc differs from the run being resumed "
                            "(r=4,alpha=8,dropout=0.1,rslora=false,targets=c_attn,c_fc in " + checkpoint.string() +
                            "); give the original run's arguments (only --log, --log-every, --save-every, --keep, "
                            "--validate-every and --checkpoint may change)");
    auto full = run_args("none", lora_reference(), "4");
    full.insert(full.end(), {"--resume", checkpoint.string()});
    check_error(full, checkpoint.string() + ": holds a LoRA adapter: resume it with the run's --lora or --adapter");

    // The same architecture with other weights is another base: the adapter was not trained on it.
    const fs::path other = scratch() / "other-base";
    REQUIRE(run_remat({"init", other.string(), "--arch", "gpt2", "--n-layer", "2", "--n-embd", "32", "--n-head", "4",
                       "--vocab-size", "256", "--n-positions", "64", "--seed", "4"}).code == 0);
    auto moved = lora_args("none", lora_reference());
    moved[1] = other.string();
    moved.insert(moved.end(), {"--resume", checkpoint.string()});
    const Result r = run_remat(moved);
    CHECK(r.code == 2);
    CHECK(r.err.starts_with("error: base weights "));
    CHECK(r.err.find(" differs from the run being resumed (") != std::string::npos);
}

TEST_CASE("LoRA --base-precision bf16: the base held in bf16 trains bitwise what --precision bf16 trains on a float32 base") {
    const fs::path fp32_base = scratch() / "lora-bf16-products", held = scratch() / "lora-bf16-base";
    auto args = lora_args("none", fp32_base);
    args.insert(args.end(), {"--precision", "bf16"});
    const Result a = run_remat(args);
    CAPTURE(a.err);
    REQUIRE(a.code == 0);
    args = lora_args("blocks", held);
    args.insert(args.end(), {"--precision", "bf16", "--base-precision", "bf16"});
    const Result b = run_remat(args);
    CAPTURE(b.err);
    REQUIRE(b.code == 0);
    // The count is the model's, however its values are held.
    CHECK(has_line(b.out, "adapter: LoRA r 4 on 4 layers (c_attn,c_fc): 2304 of 38016 parameters trained (6.06 %); "
                          "the base's projections held in bf16"));
    CHECK(read_text(held / "adapter_model.safetensors") == read_text(fp32_base / "adapter_model.safetensors"));
    CHECK(computed(held.string() + ".jsonl") == computed(fp32_base.string() + ".jsonl"));
    check_error({"train", model().string(), "--data", text().string(), "--base-precision", "bf16"},
                "--base-precision bf16 holds a frozen base: it needs --lora or --adapter");
}

namespace {

// The byte-level model with a chat template of its own: "[user] 3+4?\n[assistant] 7\n".
const fs::path& chat_model() {
    static const fs::path dir = [] {
        const fs::path d = scratch() / "chat-model";
        fs::copy(model(), d, fs::copy_options::recursive);
        const std::string chat_template =
            "{% for m in messages %}{{ '[' + m['role'] + '] ' + m['content'] + '\\n' }}{% endfor %}"
            "{% if add_generation_prompt %}{{ '[assistant] ' }}{% endif %}";
        write_text(d / "tokenizer_config.json", nlohmann::json{{"chat_template", chat_template}}.dump());
        return d;
    }();
    return dir;
}

// 40 sums asked and answered; `labelled`: the answers' bytes with their newlines.
const fs::path& chats(std::size_t* labelled = nullptr) {
    static std::size_t answers = 0;
    static const fs::path path = [] {
        std::string lines;
        for (int i = 0; i < 40; ++i) {
            const std::string answer = std::to_string(i * 7 % 23 + i);
            lines += nlohmann::json{{"messages",
                                     {{{"role", "user"}, {"content", std::to_string(i * 7 % 23) + "+" + std::to_string(i) + "?"}},
                                      {{"role", "assistant"}, {"content", answer}}}}}
                         .dump() +
                     "\n";
            answers += answer.size() + 1;
        }
        write_text(scratch() / "chats.jsonl", lines);
        return scratch() / "chats.jsonl";
    }();
    if (labelled) *labelled = answers;
    return path;
}

std::vector<std::string> chat_run_args(const fs::path& out, bool pack) {
    std::vector<std::string> args = {"train", chat_model().string(), "--data", chats().string(), "--format", "chat",
                                     "--steps", "8", "--batch", "2", "--seq", "64", "--lr", "3e-3", "--save", out.string(),
                                     "--save-every", "4", "--log", out.string() + ".jsonl"};
    if (pack) args.push_back("--pack");
    return args;
}

}  // namespace

TEST_CASE("--format chat: the loss on the assistant turns, padded or packed; a resumed run is bitwise") {
    std::size_t labelled = 0;
    const std::string data = chats(&labelled).string();
    for (const bool pack : {false, true}) {
        CAPTURE(pack);
        const fs::path out = scratch() / (pack ? "chat-packed" : "chat-padded");
        const Result r = run_remat(chat_run_args(out, pack));
        CAPTURE(r.out);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.out.find("data: " + data + ": 40 chat examples (0 cut to 64 tokens), ") != std::string::npos);
        CHECK(r.out.find(" " + std::to_string(labelled) + " labelled (the assistant turns)") != std::string::npos);
        CHECK(r.out.find(pack ? "training: 8 steps of 1 x 2 rows of 64 tokens" : "training: 8 steps of 1 x 2 examples of at most 64 tokens") !=
              std::string::npos);
        if (pack) CHECK(r.out.find("; packed into ") != std::string::npos);

        // Resumed from its checkpoint-4 into another folder: the last four steps and the model, bit for bit.
        const fs::path again = scratch() / (out.filename().string() + "-resumed");
        auto args = chat_run_args(again, pack);
        args.insert(args.end(), {"--resume", (out / "checkpoint-4").string()});
        const Result resumed = run_remat(args);
        CAPTURE(resumed.err);
        REQUIRE(resumed.code == 0);
        CHECK(read_text(again / "model.safetensors") == read_text(out / "model.safetensors"));
        const std::vector<std::string> whole = computed(out.string() + ".jsonl");
        REQUIRE(whole.size() == 8);
        CHECK(computed(again.string() + ".jsonl") == std::vector<std::string>(whole.begin() + 4, whole.end()));
    }
    auto changed = chat_run_args(scratch() / "chat-unpacked-resume", false);
    changed.insert(changed.end(), {"--resume", (scratch() / "chat-packed" / "checkpoint-4").string()});
    check_error(changed, "--pack false differs from the run being resumed (true in " + (scratch() / "chat-packed" / "checkpoint-4").string() +
                             "); give the original run's arguments (only --log, --log-every, --save-every, --keep, "
                             "--validate-every and --checkpoint may change)");
}

TEST_CASE("--format: bad examples and flags name the file and line, or the flag") {
    const std::string m = chat_model().string();
    check_error({"train", model().string(), "--data", text().string(), "--pack"},
                "--pack and --mask-prompt read supervised examples: they need --format");
    check_error({"train", m, "--data", chats().string(), "--format", "dialogue"},
                "--format: unknown data format \"dialogue\" (the formats are text, completion and chat)");
    check_error({"train", model().string(), "--data", chats().string(), "--format", "chat"},
                "--format chat: " + model().string() +
                    ": no chat template (neither chat_template.jinja nor a chat_template in tokenizer_config.json)");
    const fs::path bad = scratch() / "bad.jsonl";
    write_text(bad, "{\"prompt\": \"1+1?\", \"completion\": \"2\"}\n{\"prompt\": \"2+2?\"}\n");
    check_error({"train", m, "--data", bad.string(), "--format", "completion"}, bad.string() + ":2: no \"completion\" field");
    check_error({"train", m, "--data", chats().string(), "--format", "chat", "--seq", "64", "--batch", "50"},
                chats().string() + ": 40 examples make less than one step of 50 examples (--batch x --accumulate) in 1 epoch(s); "
                                   "give more data, more --epochs, or --steps");
}

TEST_CASE("mpirun -np 2 on packed chat examples with a LoRA adapter is bitwise one process with --accumulate 2") {
    const auto args = [](const fs::path& out, const char* accumulate) {
        auto a = chat_run_args(out, true);
        a.insert(a.end(), {"--accumulate", accumulate, "--lora", "r=4,alpha=8,dropout=0.1"});
        return a;
    };
    const fs::path one = scratch() / "chat-lora-one", two = scratch() / "chat-lora-two";
    const Result single = run_remat(args(one, "2"));
    CAPTURE(single.err);
    REQUIRE(single.code == 0);
    Result r;
    {
        UnderMpirun two_ranks(2);
        r = run_remat(args(two, "1"));
    }
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    REQUIRE(fs::exists(one / "adapter_model.safetensors"));
    CHECK(read_text(two / "adapter_model.safetensors") == read_text(one / "adapter_model.safetensors"));
    CHECK(computed(two.string() + ".jsonl") == computed(one.string() + ".jsonl"));
}
