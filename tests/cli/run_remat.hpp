#pragma once
// Running the built `remat` binary (path in $REMAT_BIN) as a user would, for the command-line tests
// (cli_test.cpp, bad_input_test.cpp): a scratch folder, file helpers, run_remat and check_error.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "remat/hf/safetensors.hpp"
#include "src/core/address_sanitizer.hpp"

extern char** environ;

namespace fs = std::filesystem;

// Inline, in a named namespace: each test uses only some of these, without unused-function warnings.
namespace cli_test {

inline const fs::path fixtures = REMAT_FIXTURES;

// A scratch folder for the whole run, removed at exit.
struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("remat-cli-test-" + std::to_string(::getpid()));
    Scratch() { fs::create_directories(dir); }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};
inline const fs::path& scratch() {
    static Scratch s;
    return s.dir;
}

inline std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
inline void write_text(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

struct Result {
    int code = -1;
    std::string out, err;
};

// Where a started remat's stdout or stderr goes: a file opened with these flags.
struct Redirect {
    std::string path;
    int flags = O_WRONLY | O_CREAT | O_TRUNC;
};

// The address-space limit (ulimit -v) remat is started under, if any.
inline std::optional<rlim_t>& child_memory_limit() {
    static std::optional<rlim_t> limit;
    return limit;
}

// Whether ChildMemoryLimit limits anything: a test of what happens beyond the memory is skipped where
// it does not, since there the text is tokenised (slowly) instead of refused.
#ifndef REMAT_ASAN
inline constexpr bool memory_can_be_limited = true;
#else
inline constexpr bool memory_can_be_limited = false;
#endif

// While one lives, remat runs under `bytes` of address space, so that a refusal which over-allocates
// fails its test instead of passing slowly. Not under AddressSanitizer, whose shadow memory alone
// reserves terabytes of address space.
struct ChildMemoryLimit {
    explicit ChildMemoryLimit(rlim_t bytes) {
#ifndef REMAT_ASAN
        child_memory_limit() = bytes;
#else
        (void)bytes;
#endif
    }
    ~ChildMemoryLimit() { child_memory_limit().reset(); }
    ChildMemoryLimit(const ChildMemoryLimit&) = delete;
    ChildMemoryLimit& operator=(const ChildMemoryLimit&) = delete;
};

// What starts remat: nothing (remat itself), or a launcher's command line such as mpirun's.
inline std::vector<std::string>& remat_launcher() {
    static std::vector<std::string> launcher;
    return launcher;
}

// While one lives, remat runs as `ranks` processes under mpirun (as root, on this machine's cores
// even if fewer; OMPI_MCA_pml=ob1 skips probing transports this machine lacks; --timeout ends a
// hung job).
// Under the sanitizers the ranks use the slow unwinder, so that src/dist/openmpi_leaks.hpp's
// suppressions match OpenMPI's stacks.
struct UnderMpirun {
    explicit UnderMpirun(int ranks) {
        ::setenv("OMPI_MCA_pml", "ob1", 1);
        const char* asan = std::getenv("ASAN_OPTIONS");
        saved_asan_ = asan ? std::optional<std::string>(asan) : std::nullopt;
        ::setenv("ASAN_OPTIONS", ((asan ? std::string(asan) + ":" : "") + "fast_unwind_on_malloc=0").c_str(), 1);
        remat_launcher() = {"/usr/bin/mpirun", "--allow-run-as-root", "--oversubscribe", "--timeout", "110", "-np",
                            std::to_string(ranks)};
    }
    ~UnderMpirun() {
        remat_launcher().clear();
        if (saved_asan_)
            ::setenv("ASAN_OPTIONS", saved_asan_->c_str(), 1);
        else
            ::unsetenv("ASAN_OPTIONS");
    }
    UnderMpirun(const UnderMpirun&) = delete;
    UnderMpirun& operator=(const UnderMpirun&) = delete;

private:
    std::optional<std::string> saved_asan_;
};

// Starts $REMAT_BIN with the arguments (through remat_launcher() if set), without waiting for it.
// Standard input is `in` when given, else this process's.
inline pid_t start_remat(const std::vector<std::string>& args, const Redirect& out, const Redirect& err,
                         const std::optional<fs::path>& in = std::nullopt) {
    const char* remat = std::getenv("REMAT_BIN");
    REQUIRE_MESSAGE(remat != nullptr, "set REMAT_BIN to the built remat binary");
    std::vector<char*> argv;
    for (const auto& a : remat_launcher()) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(const_cast<char*>(remat));
    const char* bin = argv.front();
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.path.c_str(), out.flags, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.path.c_str(), err.flags, 0644);
    if (in) posix_spawn_file_actions_addopen(&actions, 0, in->c_str(), O_RDONLY, 0);
    pid_t pid;
    // posix_spawn has no rlimit attribute: the child inherits this process's limit, lowered only
    // around the spawn.
    struct rlimit before {};
    ::getrlimit(RLIMIT_AS, &before);
    if (child_memory_limit()) {
        struct rlimit lowered = before;
        lowered.rlim_cur = std::min(*child_memory_limit(), before.rlim_max);
        ::setrlimit(RLIMIT_AS, &lowered);
    }
    const int spawned = posix_spawn(&pid, bin, &actions, nullptr, argv.data(), environ);
    if (child_memory_limit()) ::setrlimit(RLIMIT_AS, &before);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
    return pid;
}

// Runs $REMAT_BIN with the arguments, stdout and stderr captured through files; `input`, when given, is
// its standard input.
inline Result run_remat(const std::vector<std::string>& args, const std::optional<std::string>& input = std::nullopt) {
    const fs::path out = scratch() / "stdout", err = scratch() / "stderr", in = scratch() / "stdin";
    if (input) write_text(in, *input);
    const pid_t pid = start_remat(args, {out.string()}, {err.string()}, input ? std::optional<fs::path>(in) : std::nullopt);
    // A hang (a FIFO waiting for a writer, /dev/zero read to the end) fails the test, not the suite.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    int status = 0;
    while (true) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        REQUIRE(done >= 0);
        if (done == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            FAIL("remat did not finish within 2 minutes: ", args.empty() ? "" : args[0]);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE_MESSAGE(WIFEXITED(status), "remat was killed by signal " << WTERMSIG(status));
    return {WEXITSTATUS(status), read_text(out), read_text(err)};
}

// The failure contract: exit code 2, nothing on stdout, exactly the one given line on stderr.
inline void check_error(const std::vector<std::string>& args, const std::string& message,
                        const std::optional<std::string>& input = std::nullopt) {
    const Result r = run_remat(args, input);
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "error: " + message + "\n");
}

inline bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// An IN file of the given integer tensors.
inline void write_ids(const fs::path& path, const std::vector<std::pair<std::string, remat::IdTensor>>& tensors) {
    std::vector<remat::hf::WriteTensor> entries;
    for (const auto& [name, t] : tensors) entries.push_back(remat::hf::i64(name, t));
    remat::hf::write_safetensors(path, entries);
}

inline remat::IdTensor ids_of(std::initializer_list<std::size_t> shape, std::int64_t value) {
    remat::IdTensor t = remat::IdTensor::from_shape(shape);
    std::fill(t.begin(), t.end(), value);
    return t;
}
}  // namespace cli_test

using namespace cli_test;
