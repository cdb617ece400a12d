// Bad input through the `remat` command line: every malformed file kind gives exit code 2, nothing on
// stdout, and exactly one "error: …" line naming the file and the problem (asserted exactly; the table
// in docs/reliability.md lists them). Each broken model folder is tried with `remat info DIR`,
// `remat info DIR/model.safetensors` where the file itself is broken, and `remat run DIR`.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>

#include <cstring>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>

#include "tests/cli/run_remat.hpp"

using namespace remat;

namespace {
using Json = nlohmann::ordered_json;

// remat runs under 1 GiB of address space (ulimit -v): a refusal that over-allocates fails here.
const cli_test::ChildMemoryLimit one_gib(rlim_t{1} << 30);

std::string le64(std::uint64_t n) {
    std::string s(8, '\0');
    for (std::size_t i = 0; i < 8; ++i) s[i] = static_cast<char>(n >> (8 * i));
    return s;
}

// A safetensors file as its JSON header and its data section.
struct Parts {
    Json header;
    std::string data;
};
Parts split(const fs::path& file) {
    const std::string bytes = read_text(file);
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    return {Json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}
std::string join(const Json& header, const std::string& data) {
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');
    return le64(h.size()) + h + data;
}

const fs::path tiny = fixtures / "gpt2-tiny";
const std::string tiny_model = read_text(tiny / "model.safetensors");  // 35928 bytes: header 2384, data 33536

// A copy of gpt2-tiny in scratch()/bad/<name>, then `edit` applied to it.
fs::path broken_folder(const std::string& name, const std::function<void(const fs::path& dir)>& edit) {
    const fs::path dir = scratch() / "bad" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(tiny / "config.json", dir / "config.json");
    fs::copy_file(tiny / "model.safetensors", dir / "model.safetensors");
    edit(dir);
    return dir;
}
// gpt2-tiny whose model.safetensors header is edited (and re-laid out as is).
fs::path broken_header(const std::string& name, const std::function<void(Json& header)>& edit) {
    return broken_folder(name, [&](const fs::path& dir) {
        Parts p = split(dir / "model.safetensors");
        edit(p.header);
        write_text(dir / "model.safetensors", join(p.header, p.data));
    });
}
fs::path broken_config(const std::string& name, const std::function<void(Json& config)>& edit) {
    return broken_folder(name, [&](const fs::path& dir) {
        Json config = Json::parse(read_text(dir / "config.json"));
        edit(config);
        write_text(dir / "config.json", config.dump(2));
    });
}

const fs::path& good_input() {
    static const fs::path path = [] {
        const fs::path p = scratch() / "good-in.safetensors";
        write_ids(p, {{"input_ids", ids_of({2, 8}, 1)}});
        return p;
    }();
    return path;
}
const fs::path out_path() { return scratch() / "bad" / "out.safetensors"; }

std::vector<std::string> run_args(const fs::path& dir, const fs::path& in = good_input()) {
    return {"run", dir.string(), "--input", in.string(), "--out", out_path().string()};
}

// The model folder fails the same way for info and run; `file_too` when model.safetensors itself is
// malformed (then `remat info FILE` says the same).
void check_folder(const fs::path& dir, const std::string& message, bool file_too = false) {
    CAPTURE(dir);
    check_error({"info", dir.string()}, message);
    if (file_too) check_error({"info", (dir / "model.safetensors").string()}, message);
    check_error(run_args(dir), message);
    CHECK_FALSE(fs::exists(out_path()));
}
}  // namespace

TEST_CASE("bad model files: one error line naming the file and the problem") {
    const auto file = [](const fs::path& dir) { return (dir / "model.safetensors").string() + ": "; };

    SUBCASE("truncated") {
        const fs::path dir = broken_folder("truncated", [](const fs::path& d) {
            write_text(d / "model.safetensors", tiny_model.substr(0, tiny_model.size() - 100));
        });
        check_folder(dir, file(dir) + "tensor \"ln_f.weight\": data_offsets [33408, 33472] run past the end of the data section (33436 bytes)",
                     true);
        const fs::path mid = broken_folder("truncated-header", [](const fs::path& d) {
            write_text(d / "model.safetensors", tiny_model.substr(0, 1000));
        });
        check_folder(mid, file(mid) + "header length 2384 runs past the end of the file (1000 bytes)", true);
    }
    SUBCASE("header longer than the file") {
        const fs::path dir = broken_folder("long-header", [](const fs::path& d) {
            write_text(d / "model.safetensors", le64(40000) + tiny_model.substr(8));
        });
        check_folder(dir, file(dir) + "header length 40000 runs past the end of the file (35928 bytes)", true);
        const fs::path huge = broken_folder("huge-header", [](const fs::path& d) {
            write_text(d / "model.safetensors", le64(std::uint64_t{1} << 62) + tiny_model.substr(8));
        });
        check_folder(huge, file(huge) + "header length 4611686018427387904 exceeds the 100000000-byte limit", true);
    }
    SUBCASE("header not JSON") {
        const fs::path dir = broken_folder("not-json", [](const fs::path& d) {
            std::string bytes = tiny_model;
            bytes[9] = '!';  // {"__metadata__": … becomes {!__metadata__": …
            write_text(d / "model.safetensors", bytes);
        });
        check_folder(dir,
                     file(dir) + "header: not valid JSON: parse error at line 1, column 2: syntax error while parsing object key - "
                                 "invalid literal; last read: '{!'; expected string literal",
                     true);
        // A Git LFS pointer checked out instead of the weights: text, not a header length.
        const fs::path lfs = broken_folder("lfs-pointer", [](const fs::path& d) {
            write_text(d / "model.safetensors",
                       "version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 35928\n");
        });
        check_folder(lfs, file(lfs) + "a Git LFS pointer, not the tensors (fetch them with `git lfs pull`)", true);
    }
    SUBCASE("overlapping offsets") {
        const fs::path dir = broken_header("overlap", [](Json& h) { h["h.0.ln_1.bias"]["data_offsets"] = {5120, 5184}; });
        check_folder(dir, file(dir) + "tensor \"h.0.ln_1.bias\": data_offsets [5120, 5184] overlap tensor \"h.0.ln_1.weight\" at [5120, 5184]",
                     true);
    }
    SUBCASE("out-of-bounds offsets") {
        const fs::path dir = broken_header("out-of-bounds", [](Json& h) { h["ln_f.bias"]["data_offsets"] = {33536, 33600}; });
        check_folder(dir, file(dir) + "tensor \"ln_f.bias\": data_offsets [33536, 33600] run past the end of the data section (33536 bytes)",
                     true);
    }
    SUBCASE("unknown dtype") {
        const fs::path dir = broken_header("dtype", [](Json& h) { h["wpe.weight"]["dtype"] = "F31"; });
        check_folder(dir, file(dir) + "tensor \"wpe.weight\": unknown dtype \"F31\"", true);
    }
    SUBCASE("element count disagreeing with the byte range") {
        const fs::path dir = broken_header("count", [](Json& h) { h["h.0.ln_1.weight"]["shape"] = {17}; });
        check_folder(dir, file(dir) + "tensor \"h.0.ln_1.weight\": shape (17,) needs 68 bytes, data_offsets give 64", true);
    }
    SUBCASE("an empty file") {
        const fs::path dir = broken_folder("empty-file", [](const fs::path& d) { write_text(d / "model.safetensors", ""); });
        check_folder(dir, file(dir) + "file is 0 bytes, too short for the 8-byte header length", true);
    }
    SUBCASE("a missing tensor") {
        const fs::path dir = broken_folder("missing-tensor", [](const fs::path& d) {
            const auto f = hf::SafetensorsFile::open(tiny / "model.safetensors");
            std::vector<hf::WriteTensor> kept;
            for (const hf::TensorInfo& t : f.tensors())
                if (t.name != "h.1.mlp.c_proj.bias") kept.push_back({t.name, t.dtype, t.shape, f.bytes(t)});
            hf::write_safetensors(d / "model.safetensors", kept, f.metadata());
        });
        check_folder(dir, file(dir) + "1 of 28 tensors cannot be loaded: missing transformer.h.1.mlp.c_proj.bias (expected shape (16,))");
    }
    SUBCASE("a sharded checkpoint missing a shard") {
        const fs::path dir = broken_folder("missing-shard", [](const fs::path& d) {
            fs::rename(d / "model.safetensors", d / "model-00001-of-00002.safetensors");
            write_text(d / "model.safetensors.index.json",
                       R"({"weight_map": {"wte.weight": "model-00001-of-00002.safetensors", "ln_f.bias": "model-00002-of-00002.safetensors"}})");
        });
        check_folder(dir, (dir / "model.safetensors.index.json").string() + ": shard model-00002-of-00002.safetensors is missing");
    }
    SUBCASE("a pytorch_model.bin that calls os.system") {
        const fs::path dir = broken_folder("os-system", [](const fs::path& d) {
            fs::remove(d / "model.safetensors");
            fs::copy_file(fixtures / "bin" / "os-system.bin", d / "pytorch_model.bin");
        });
        check_folder(dir, (dir / "pytorch_model.bin").string() +
                              ": refusing to load global \"os.system\" (only a state dict's tensors are allowed)");
    }
}

TEST_CASE("bad config.json: one error line naming the file and the field") {
    const auto config = [](const fs::path& dir) { return (dir / "config.json").string() + ": "; };

    SUBCASE("missing a field") {
        const fs::path dir = broken_config("no-n-layer", [](Json& c) { c.erase("n_layer"); });
        check_folder(dir, config(dir) + "missing field n_layer");
        const fs::path positions = broken_config("no-positions", [](Json& c) {
            c.erase("n_positions");
            c.erase("n_ctx");
        });
        check_folder(positions, config(positions) + "missing field n_positions (or n_ctx)");
    }
    SUBCASE("a field of the wrong type or value") {
        const fs::path dir = broken_config("string-field", [](Json& c) { c["n_embd"] = "16"; });
        check_folder(dir, config(dir) + "n_embd must be a non-negative integer, got \"16\"");
        const fs::path heads = broken_config("indivisible", [](Json& c) { c["n_head"] = 3; });
        check_folder(heads, config(heads) + "GPT-2 config: n_embd = 16 is not divisible by n_head = 3");
    }
    SUBCASE("disagreeing with the tensor shapes") {
        const fs::path dir = broken_config("vocab", [](Json& c) { c["vocab_size"] = 65; });
        check_folder(dir, (dir / "model.safetensors").string() +
                              ": 1 of 28 tensors cannot be loaded: transformer.wte.weight: expected shape (65, 16), found (64, 16) "
                              "(as wte.weight)");
        const fs::path positions = broken_config("positions", [](Json& c) { c["n_positions"] = 32; });
        check_folder(positions, (positions / "model.safetensors").string() +
                                    ": 1 of 28 tensors cannot be loaded: transformer.wpe.weight: expected shape (32, 16), found (16, 16) "
                                    "(as wpe.weight)");
        // Fewer layers than the checkpoint holds is not an error: the extra tensors are a warning, as in HF.
    }
    SUBCASE("hostile JSON: a number out of range, a deeply nested value") {
        const fs::path dir = broken_folder("config-overflow", [](const fs::path& d) {
            write_text(d / "config.json", R"({"model_type": "gpt2", "vocab_size": 1e400})");
        });
        check_folder(dir, config(dir) + "not valid JSON: number overflow parsing '1e400'");
        // Quoting the value with nlohmann's recursive dump() overflowed the stack (a crash, exit 139).
        const fs::path deep = broken_folder("config-deep", [](const fs::path& d) {
            write_text(d / "config.json", R"({"model_type": )" + std::string(100000, '[') + std::string(100000, ']') + "}");
        });
        check_folder(deep, config(deep) + "nested deeper than 64 levels");
        const fs::path field = broken_folder("field-deep", [](const fs::path& d) {  // text: the test's own dump() would recurse
            std::string text = read_text(d / "config.json");
            const std::size_t at = text.find("\"n_head\": 2");
            REQUIRE(at != std::string::npos);
            text.replace(at, 11, "\"n_head\": " + std::string(100000, '[') + std::string(100000, ']'));
            write_text(d / "config.json", text);
        });
        check_folder(field, config(field) + "nested deeper than 64 levels");
    }
    SUBCASE("not JSON") {
        const fs::path dir = broken_folder("config-not-json", [](const fs::path& d) { write_text(d / "config.json", "{\"n_layer\": 2,"); });
        check_folder(dir, config(dir) +
                              "not valid JSON: parse error at line 1, column 15: syntax error while "
                              "parsing object key - unexpected end of input; expected string literal");
    }
}

TEST_CASE("bad run input: token ids, empty batches, empty files") {
    const fs::path dir = tiny;
    const fs::path in = scratch() / "bad" / "in.safetensors";
    fs::create_directories(in.parent_path());

    IdTensor ids = ids_of({2, 8}, 1);
    ids(1, 3) = 64;
    write_ids(in, {{"input_ids", ids}});
    check_error(run_args(dir, in), in.string() + ": input_ids[1, 3] = 64 is out of range for vocab_size 64");

    write_ids(in, {{"input_ids", ids_of({0, 8}, 1)}});
    check_error(run_args(dir, in), in.string() + ": tensor \"input_ids\" is empty, shape (0, 8)");
    write_ids(in, {{"input_ids", ids_of({2, 0}, 1)}});
    check_error(run_args(dir, in), in.string() + ": tensor \"input_ids\" is empty, shape (2, 0)");
    check_error(run_args(fixtures / "bert-tiny", in), in.string() + ": tensor \"input_ids\" is empty, shape (2, 0)");

    write_text(in, "");
    check_error(run_args(dir, in), in.string() + ": file is 0 bytes, too short for the 8-byte header length");
    check_error({"info", in.string()}, in.string() + ": file is 0 bytes, too short for the 8-byte header length");

    write_text(in, le64(100) + "{}");
    check_error(run_args(dir, in), in.string() + ": header length 100 runs past the end of the file (10 bytes)");
    CHECK_FALSE(fs::exists(out_path()));
}

TEST_CASE("unwritable output: one error line, nothing written") {
    const std::string missing = (scratch() / "bad" / "no-such-folder" / "out.safetensors").string();
    check_error({"run", tiny.string(), "-i", good_input().string(), "-o", missing},
                missing + ": cannot write: folder " + (scratch() / "bad" / "no-such-folder").string() + " does not exist");
    // Unwritable even for root: /proc refuses new files.
    check_error({"run", tiny.string(), "-i", good_input().string(), "-o", "/proc/remat-out.safetensors"},
                "/proc/remat-out.safetensors: cannot write in folder /proc: No such file or directory");
    if (::geteuid() != 0) {  // root ignores permissions
        const fs::path locked = scratch() / "bad" / "read-only";
        fs::create_directories(locked);
        fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
        const std::string out = (locked / "out.safetensors").string();
        check_error({"run", tiny.string(), "-i", good_input().string(), "-o", out},
                    out + ": cannot write in folder " + locked.string() + ": Permission denied");
        fs::permissions(locked, fs::perms::owner_all);
    }
}

TEST_CASE("an interrupted write of OUT leaves the previous OUT intact") {
    // `remat run` with a file-size limit (inherited through exec, SIGXFSZ ignored): writing OUT fails
    // with EFBIG part way, as on a full disk.
    const fs::path out = scratch() / "bad" / "previous-out.safetensors";
    fs::create_directories(out.parent_path());
    REQUIRE(run_remat({"run", tiny.string(), "-i", good_input().string(), "-o", out.string()}).code == 0);
    const std::string before = read_text(out);

    const char* bin = std::getenv("REMAT_BIN");
    REQUIRE(bin != nullptr);
    const fs::path err = scratch() / "limited-stderr";
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ::dup2(fd, 2) < 0) ::_exit(100);
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{16 << 10, 16 << 10};  // OUT with gradients is ~40 KB
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(101);
        const std::string dir = tiny.string(), in = good_input().string(), o = out.string();
        const char* argv[] = {bin, "run", dir.c_str(), "-i", in.c_str(), "-o", o.c_str(), "--grads", nullptr};
        ::execve(bin, const_cast<char* const*>(argv), environ);
        ::_exit(102);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(read_text(err) == "error: " + out.string() + ": cannot write \"" + out.string() + ".tmp-" + std::to_string(pid) +
                                "\": File too large\n");
    CHECK(read_text(out) == before);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(out.parent_path()))
        if (e.path().filename().string().starts_with("previous-out")) left.push_back(e.path().filename().string());
    CHECK(left == std::vector<std::string>{"previous-out.safetensors"});
}
