// An interrupted save never leaves a partial file under a final name, and leaves the previous files
// byte-identical: a child process SIGKILLed in the middle of writing (hf::save and write_safetensors),
// a child whose writes fail (a file-size limit: EFBIG), and a save whose second file cannot be created.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "remat/hf/load.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/table_model.hpp"

using namespace remat;
using test::TempDir;
namespace fs = std::filesystem;

namespace {
using test::fixtures;

using test::read_text;

std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A GPT-2 config.json of these sizes, and the model it describes (initialised from seed 0).
struct Gpt2 {
    std::string config;
    std::unique_ptr<models::Model> model;
};
Gpt2 gpt2_of(std::size_t vocab, std::size_t embd, std::size_t layers) {
    const models::SizeRequest sizes{.n_layer = layers, .n_embd = embd, .n_head = 4, .vocab_size = vocab, .n_positions = 64};
    return {test::architecture("GPT2LMHeadModel").config_with(sizes), test::table_model("GPT2LMHeadModel", sizes, 0)};
}

std::unique_ptr<models::Model> tiny_gpt2() { return test::load_table_model("GPT2LMHeadModel", fixtures / "gpt2-tiny"); }

// Runs f in a child process; the child never returns into the test runner.
pid_t fork_child(const std::function<void()>& f) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        try {
            f();
        } catch (...) {
            ::_exit(3);
        }
        ::_exit(0);
    }
    return pid;
}

// Starts `save` in a child, waits until its temporary (`final_name` + ".tmp-<pid>" in dir) holds more
// than `bytes_written` bytes, SIGKILLs it there, and returns the child's pid.
pid_t kill_mid_write(const fs::path& dir, const std::string& final_name, std::uintmax_t bytes_written,
                     const std::function<void()>& save) {
    const pid_t pid = fork_child(save);
    const fs::path temporary = dir / (final_name + ".tmp-" + std::to_string(pid));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    bool seen = false;
    while (std::chrono::steady_clock::now() < deadline) {
        std::error_code ec;
        const auto size = fs::file_size(temporary, ec);
        if (!ec && size > bytes_written) {
            seen = true;
            break;
        }
        int status;
        if (::waitpid(pid, &status, WNOHANG) == pid) FAIL("the child finished before it could be interrupted, status " << status);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(seen);
    REQUIRE_MESSAGE(WIFSIGNALED(status), "the save completed before the kill: the test proves nothing");
    CHECK(WTERMSIG(status) == SIGKILL);
    return pid;
}
}  // namespace

TEST_CASE("hf::save killed while writing leaves the previous model folder intact") {
    TempDir dir;
    auto previous = tiny_gpt2();
    const std::string previous_json = read_text(fixtures / "gpt2-tiny" / "config.json");
    previous->save(previous_json, dir.path);
    const std::string model_before = read_text(dir.path / "model.safetensors");
    const std::string config_before = read_text(dir.path / "config.json");
    REQUIRE(config_before == previous_json);

    // ~190 MB of parameters (GPT-2 small's embeddings and one block): writing takes long enough to be
    // caught more than 1 MB into the file.
    const pid_t pid = kill_mid_write(dir.path, "model.safetensors", 1 << 20, [&] {
        const Gpt2 big = gpt2_of(50257, 768, 1);
        big.model->save(big.config, dir.path);
    });

    CHECK(read_text(dir.path / "model.safetensors") == model_before);
    CHECK(read_text(dir.path / "config.json") == config_before);
    // Only the killed process's temporaries are left beside them, never under a final name.
    const std::string suffix = ".tmp-" + std::to_string(pid);
    CHECK(listing(dir.path) == std::vector<std::string>{"config.json", "config.json" + suffix, "model.safetensors",
                                                        "model.safetensors" + suffix});
    auto reloaded = test::load_table_model("GPT2LMHeadModel", dir.path);
    CHECK(reloaded->count_parameters() == previous->count_parameters());
}

TEST_CASE("write_safetensors killed while writing leaves the previous file intact") {
    TempDir dir;
    const fs::path path = dir.path / "big.safetensors";
    const Tensor small{1.0f, 2.0f, 3.0f};
    hf::write_safetensors(path, {hf::f32("w", small)});
    const std::string before = read_text(path);

    const pid_t pid = kill_mid_write(dir.path, "big.safetensors", 1 << 20, [&] {
        const Tensor big = full(Shape{64u << 20}, 0.5f);  // 256 MB
        hf::write_safetensors(path, {hf::f32("w", big)});
    });
    CHECK(read_text(path) == before);
    CHECK(listing(dir.path) == std::vector<std::string>{"big.safetensors", "big.safetensors.tmp-" + std::to_string(pid)});
}

TEST_CASE("hf::save whose writes fail (file size limit) removes its temporaries and keeps the previous files") {
    TempDir dir;
    auto previous = tiny_gpt2();
    previous->save(read_text(fixtures / "gpt2-tiny" / "config.json"), dir.path);
    const std::string model_before = read_text(dir.path / "model.safetensors");
    const std::string config_before = read_text(dir.path / "config.json");

    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = fork_child([&] {
        ::close(pipe_fds[0]);
        // write(2) past RLIMIT_FSIZE fails with EFBIG once SIGXFSZ is ignored: an injected disk-full.
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{256 << 10, 256 << 10};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(4);
        const Gpt2 medium = gpt2_of(1024, 128, 2);  // ~2 MB of parameters
        std::string message = "no error";
        try {
            medium.model->save(medium.config, dir.path);
        } catch (const hf::FormatError& e) {
            message = e.what();
        }
        if (::write(pipe_fds[1], message.data(), message.size()) < 0) ::_exit(5);
    });
    ::close(pipe_fds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);

    const fs::path model = dir.path / "model.safetensors";
    CHECK(message == model.string() + ": cannot write \"" + model.string() + ".tmp-" + std::to_string(pid) + "\": File too large");
    CHECK(read_text(model) == model_before);
    CHECK(read_text(dir.path / "config.json") == config_before);
    CHECK(listing(dir.path) == std::vector<std::string>{"config.json", "model.safetensors"});
}

TEST_CASE("hf::save renames neither file when the second cannot be written") {
    TempDir dir;
    auto previous = tiny_gpt2();
    previous->save(read_text(fixtures / "gpt2-tiny" / "config.json"), dir.path);
    const std::string model_before = read_text(dir.path / "model.safetensors");
    const std::string config_before = read_text(dir.path / "config.json");

    // config.json's temporary name is taken by a folder: creating it fails after model.safetensors'
    // temporary exists. Writing one file after the other would already have replaced model.safetensors.
    const fs::path blocker = dir.path / ("config.json.tmp-" + std::to_string(::getpid()));
    fs::create_directories(blocker / "child");
    const Gpt2 other = gpt2_of(64, 16, 1);
    CHECK_THROWS_WITH_AS(other.model->save("{}", dir.path),
                         ((dir.path / "config.json").string() + ": cannot create \"" + blocker.string() + "\": Is a directory").c_str(),
                         hf::FormatError);
    fs::remove_all(blocker);
    CHECK(read_text(dir.path / "model.safetensors") == model_before);
    CHECK(read_text(dir.path / "config.json") == config_before);
    CHECK(listing(dir.path) == std::vector<std::string>{"config.json", "model.safetensors"});
}
