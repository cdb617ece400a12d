// Hostile input through the command line, one section per class of docs/reliability.md ("Hostile
// input"): sizes checked before allocating, special files, untrusted JSON, pytorch_model.bin's claims,
// files shrinking while mapped, protected outputs, non-finite results, text from files reaching the
// terminal, run sizes. Every refusal: exit code 2, stdout empty, stderr one "error:" line of at most
// 4096 bytes of valid UTF-8 naming the file, field or flag, no temporary left, an existing output
// untouched — with remat started under a 1 GiB address-space limit (ulimit -v), so that a refusal
// which over-allocates fails here.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "remat/core/in_quotes.hpp"
#include "tests/cli/run_remat.hpp"

using namespace remat;
using namespace cli_test;

namespace {

const ChildMemoryLimit one_gib(rlim_t{1} << 30);

const fs::path tiny = fixtures / "gpt2-tiny";

fs::path place(const std::string& name) {
    const fs::path dir = scratch() / "hostile" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}
// A copy of gpt2-tiny whose config.json has `edit` applied.
fs::path model_with(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    const fs::path dir = place(name);
    fs::copy_file(tiny / "model.safetensors", dir / "model.safetensors");
    nlohmann::json config = nlohmann::json::parse(read_text(tiny / "config.json"));
    edit(config);
    write_text(dir / "config.json", config.dump(2));
    return dir;
}
// A copy of gpt2-tiny with `name` replaced by what make() puts there.
fs::path model_replacing(const std::string& folder, const std::string& name, const std::function<void(const fs::path&)>& make) {
    const fs::path dir = place(folder);
    fs::copy_file(tiny / "config.json", dir / "config.json");
    fs::copy_file(tiny / "model.safetensors", dir / "model.safetensors");
    fs::remove(dir / name);
    make(dir / name);
    return dir;
}
void fifo(const fs::path& p) { REQUIRE(::mkfifo(p.c_str(), 0644) == 0); }

// `from`'s tensors written to `to` (another path: `from` stays mapped while read), element `at` of
// `name` (C order) set to NaN.
void with_nan(const fs::path& from, const fs::path& to, const std::string& name, std::size_t at) {
    const auto f = hf::SafetensorsFile::open(from);
    std::vector<Tensor> kept;
    std::vector<hf::WriteTensor> entries;
    kept.reserve(f.tensors().size());
    for (const hf::TensorInfo& t : f.tensors()) {
        kept.push_back(f.read_float(t));
        if (t.name == name) kept.back().data()[at] = std::nanf("");
        entries.push_back(hf::f32(t.name, kept.back()));
    }
    hf::write_safetensors(to, entries);
}

fs::path input_ids(const std::string& name = "in.safetensors") {
    const fs::path p = scratch() / "hostile" / name;
    fs::create_directories(p.parent_path());
    write_ids(p, {{"input_ids", IdTensor{{1, 2, 3, 4}}}});
    return p;
}

std::vector<std::string> files_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// The refusal contract; `message` is the whole error line's text, or (ending in "...") its start.
// `folder`, when given, must hold the same files afterwards (no temporary, no partial output).
void refused(const std::vector<std::string>& args, const std::string& message, const fs::path& folder = {}) {
    const std::vector<std::string> before = folder.empty() ? std::vector<std::string>{} : files_in(folder);
    const Result r = run_remat(args);
    CAPTURE(args);
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    REQUIRE(r.err.starts_with("error: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.back() == '\n');
    CHECK(r.err.size() <= 4096);
    CHECK(printable(r.err.substr(0, r.err.size() - 1)) == r.err.substr(0, r.err.size() - 1));  // valid UTF-8, no control bytes
    const std::string line = r.err.substr(7, r.err.size() - 8);
    if (message.ends_with("..."))
        CHECK(line.starts_with(message.substr(0, message.size() - 3)));
    else
        CHECK(line == message);
    if (!folder.empty()) CHECK(files_in(folder) == before);
}

}  // namespace

TEST_CASE("1. sizes are checked before anything is allocated for them") {
    const fs::path in = input_ids();
    const fs::path vocab = model_with("vocab-2e62", [](auto& c) { c["vocab_size"] = std::uint64_t{1} << 62; });
    refused({"run", vocab.string(), "--input", in.string(), "--out", (scratch() / "o.safetensors").string()},
            (vocab / "config.json").string() + ": GPT-2 config: vocab_size = 4611686018427387904 is over the limit of 16777216");
    const fs::path wide = model_with("embd-2e40", [](auto& c) { c["n_embd"] = std::uint64_t{1} << 40, c["n_head"] = 1; });
    refused({"info", wide.string()}, (wide / "config.json").string() + ": GPT-2 config: n_embd = 1099511627776 is over the limit of 16777216");
    const fs::path deep = model_with("layers-1e5", [](auto& c) { c["n_layer"] = 100000; });
    refused({"info", deep.string()}, (deep / "config.json").string() + ": describes a model larger than " +
                                         (deep / "model.safetensors").string() + " holds (building it passed 16.0 MiB; ...");
    // Within what the checkpoint justifies, but missing hundreds of tensors: ten named, the rest counted.
    const fs::path forty = model_with("layers-40", [](auto& c) { c["n_layer"] = 40; });
    const Result r = run_remat({"info", forty.string()});
    CHECK(r.code == 2);
    CHECK(r.err.find("456 of 484 tensors cannot be loaded: missing transformer.h.2.ln_1.weight") != std::string::npos);
    CHECK(r.err.ends_with("; and 446 more\n"));
    // init: sizes that cannot fit in the memory left are refused before the folder is made.
    refused({"init", (scratch() / "hostile" / "huge").string(), "--arch", "gpt2", "--n-layer", "4000", "--n-embd", "4096",
             "--n-head", "8", "--vocab-size", "256", "--n-positions", "64"},
            "GPT2LMHeadModel (n_layer 4000, n_embd 4096, n_head 8, vocab_size 256, n_positions 64) needs more than the ...");
    CHECK_FALSE(fs::exists(scratch() / "hostile" / "huge"));
}

TEST_CASE("2. special files under a file's name are refused by type, without blocking") {
    const fs::path in = input_ids();
    const fs::path weights = model_replacing("fifo-weights", "model.safetensors", fifo);
    refused({"info", weights.string()}, (weights / "model.safetensors").string() + ": is a FIFO (named pipe), expected a regular file");
    const fs::path config = model_replacing("fifo-config", "config.json", fifo);
    refused({"run", config.string(), "--input", in.string(), "--out", (scratch() / "o.safetensors").string()},
            (config / "config.json").string() + ": is a FIFO (named pipe), expected a regular file");
    const fs::path zero = model_replacing("zero-config", "config.json", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); });
    refused({"info", zero.string()}, (zero / "config.json").string() + ": is a character device, expected a regular file");
    const fs::path folder = model_replacing("folder-config", "config.json", [](const fs::path& p) { fs::create_directory(p); });
    refused({"info", folder.string()}, (folder / "config.json").string() + ": is a folder, expected a file");
    fifo(scratch() / "hostile" / "in-fifo");
    refused({"run", tiny.string(), "--input", (scratch() / "hostile" / "in-fifo").string(), "--out", (scratch() / "o.safetensors").string()},
            (scratch() / "hostile" / "in-fifo").string() + ": is a FIFO (named pipe), expected a regular file");
    // A tokenizer's vocab.json reading /dev/urandom, for encode.
    const fs::path tokenizer = place("urandom-vocab");
    fs::create_symlink("/dev/urandom", tokenizer / "vocab.json");
    fs::copy_file(fixtures / "tokenizer" / "merges.txt", tokenizer / "merges.txt");
    write_text(scratch() / "hostile" / "a.txt", "some text\n");
    refused({"encode", tokenizer.string(), (scratch() / "hostile" / "a.txt").string(), "-o", (scratch() / "hostile" / "a.tok").string()},
            (tokenizer / "vocab.json").string() + ": is a character device, expected a regular file");
    // A folder whose only "token file" is a FIFO, for train: not a token file, never opened (a FIFO
    // given as --data itself is a text stream, read as `--data -` is).
    const fs::path data = place("token-folder");
    fifo(data / "part.tok");
    const fs::path bytes = place("bytes-model");
    REQUIRE(run_remat({"init", bytes.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                       "--vocab-size", "256", "--n-positions", "32"}).code == 0);
    refused({"train", bytes.string(), "--data", data.string(), "--steps", "1"},
            data.string() + ": a folder without token files (*.tok; remat encode writes them)");
}

TEST_CASE("3. untrusted JSON: one strict reader, nesting bounded, nothing after the value") {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const fs::path index = place("deep-index");
    write_text(index / "config.json", read_text(tiny / "config.json"));
    write_text(index / "model.safetensors.index.json", R"({"metadata": )" + deep + R"(, "weight_map": {}})");
    refused({"info", index.string()}, (index / "model.safetensors.index.json").string() + ": nested deeper than 64 levels");
    const fs::path garbage = model_replacing("nul-config", "config.json", [](const fs::path& p) {
        write_text(p, read_text(tiny / "config.json") + std::string("\0garbage", 8));
    });
    refused({"info", garbage.string()}, (garbage / "config.json").string() + ": not valid JSON: NUL byte at offset ...");
    const fs::path twice = model_replacing("twice-config", "config.json", [](const fs::path& p) {
        std::string c = read_text(tiny / "config.json");
        c.insert(c.find('{') + 1, R"("n_layer": 7, )");
        write_text(p, c);
    });
    refused({"info", twice.string()}, (twice / "config.json").string() + ": duplicate key \"n_layer\"");
    const fs::path tokenizer = place("deep-tokenizer");
    write_text(tokenizer / "tokenizer.json", R"({"version": "1.0", "added_tokens": )" + deep + "}");
    write_text(scratch() / "hostile" / "b.txt", "text\n");
    refused({"encode", tokenizer.string(), (scratch() / "hostile" / "b.txt").string(), "-o", (scratch() / "hostile" / "b.tok").string()},
            (tokenizer / "tokenizer.json").string() + ": nested deeper than 64 levels");
}

TEST_CASE("4. pytorch_model.bin: claims checked against the archive before allocating") {
    const fs::path lying = place("lying-bin");
    fs::copy_file(tiny / "config.json", lying / "config.json");
    fs::copy_file(fixtures / "bin" / "lying-size.bin", lying / "pytorch_model.bin");
    refused({"info", lying.string()}, (lying / "pytorch_model.bin").string() +
                                          ": storage \"0\" (\"archive/data/0\"): an uncompressed entry of 16 bytes claims to hold 1073741824");
}

TEST_CASE("5. a checkpoint truncated while remat reads it: an error or a result, never a signal") {
    // A 32 MiB model.safetensors cut while `remat info` loads it; whichever moment the cut falls on,
    // remat exits normally (0 when it read everything first, 2 with one error line otherwise).
    const fs::path dir = place("shrinking");
    REQUIRE(run_remat({"init", dir.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "1024", "--n-head", "8",
                       "--vocab-size", "4096", "--n-positions", "64", "--force"}).code == 0);
    const std::string whole = read_text(dir / "model.safetensors");
    for (int delay_ms : {0, 10, 25, 50, 100, 200, 400}) {
        write_text(dir / "model.safetensors", whole);
        const fs::path out = scratch() / "stdout", err = scratch() / "stderr";
        const pid_t pid = start_remat({"info", dir.string()}, {out.string()}, {err.string()});
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        fs::resize_file(dir / "model.safetensors", 4096);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        const std::string error = read_text(err);
        CAPTURE(delay_ms);
        CAPTURE(error);
        REQUIRE(WIFEXITED(status));  // not SIGBUS
        CHECK((WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2));
        if (WEXITSTATUS(status) == 2) CHECK(std::count(error.begin(), error.end(), '\n') == 1);
    }
}

TEST_CASE("6. outputs: never a device, never a file being read, never half-written") {
    const fs::path in = input_ids();
    const fs::path out_dir = place("outputs");
    fs::create_symlink("/dev/null", out_dir / "null");
    refused({"run", tiny.string(), "--input", in.string(), "--out", (out_dir / "null").string()},
            (out_dir / "null").string() + ": is a character device; --out takes a regular file or a new path", out_dir);
    fifo(out_dir / "pipe");
    refused({"train", tiny.string(), "--data", in.string(), "--log", (out_dir / "pipe").string()},
            (out_dir / "pipe").string() + ": is a FIFO (named pipe); --log takes a regular file or a new path", out_dir);
    const fs::path self = place("self");
    fs::copy_file(tiny / "config.json", self / "config.json");
    fs::copy_file(tiny / "model.safetensors", self / "model.safetensors");
    refused({"run", self.string(), "--input", in.string(), "--out", (self / "model.safetensors").string()},
            (self / "model.safetensors").string() + ": --out would overwrite a file this command reads; write elsewhere", self);
    CHECK(read_text(self / "model.safetensors") == read_text(tiny / "model.safetensors"));
    refused({"run", tiny.string(), "--input", in.string(), "--out", in.string()},
            in.string() + ": --out would overwrite a file this command reads; write elsewhere");
    refused({"run", tiny.string(), "--input", in.string(), "--out", ""}, "--out: the path is empty");
    write_text(out_dir / "book.txt", "call me Ishmael\n");
    refused({"encode", tiny.string(), (out_dir / "book.txt").string(), "-o", (out_dir / "book.txt").string()},
            (out_dir / "book.txt").string() + ": --out would overwrite a file this command reads; write elsewhere", out_dir);
    CHECK(read_text(out_dir / "book.txt") == "call me Ishmael\n");
}

TEST_CASE("7. non-finite results are errors naming where they appeared") {
    // A weight of NaN: run writes no file of NaNs.
    const fs::path nan_model = place("nan-weights");
    fs::copy_file(tiny / "config.json", nan_model / "config.json");
    with_nan(tiny / "model.safetensors", nan_model / "model.safetensors", "h.1.mlp.c_fc.weight", 3);
    const fs::path in = input_ids();
    refused({"run", nan_model.string(), "--input", in.string(), "--out", (scratch() / "hostile" / "nan.safetensors").string()},
            "the loss is nan (it first appears in the input of transformer.h.1.mlp.c_proj: input (1, 4, 64) has NaN at index ...");
    CHECK_FALSE(fs::exists(scratch() / "hostile" / "nan.safetensors"));
    // A NaN the loss never reads (the position embedding of a position past --seq) is not saved as a model.
    const fs::path unread = place("nan-unread");
    REQUIRE(run_remat({"init", unread.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                       "--vocab-size", "256", "--n-positions", "32", "--force"}).code == 0);
    const fs::path unread_weights = scratch() / "hostile" / "unread.safetensors";
    with_nan(unread / "model.safetensors", unread_weights, "transformer.wpe.weight", 31 * 16 + 2);  // (31, 2)
    fs::rename(unread_weights, unread / "model.safetensors");
    write_text(scratch() / "hostile" / "d.txt", std::string(2000, 'b'));
    const fs::path saved = scratch() / "hostile" / "nan-saved";
    const Result trained = run_remat({"train", unread.string(), "--data", (scratch() / "hostile" / "d.txt").string(), "--steps", "1",
                                      "--batch", "2", "--seq", "8", "--save", saved.string()});
    CHECK(trained.code == 2);  // after the step (its progress is on stdout), at the save
    CHECK(trained.err.ends_with("\nerror: transformer.wpe.weight holds nan at index (31, 2); " + saved.string() +
                                " not written (a diverged update, or a checkpoint that held it)\n"));
    CHECK_FALSE(fs::exists(saved / "model.safetensors"));
    // The demo: two diverged runs used to agree on "max gradient difference: 0".
    const Result r = run_remat({"demo", "--steps", "3", "--lr", "1e38", "--batch", "2", "--seq", "16"});
    CHECK(r.code == 2);
    CHECK(r.err.find("error: step ") != std::string::npos);
    CHECK(r.err.find("model's loss is nan (it first appears in the input of ") != std::string::npos);
    CHECK(r.out.find("max gradient difference: 0") == std::string::npos);
}

TEST_CASE("8. text from files reaches the terminal escaped") {
    const fs::path dir = place("escapes");
    const std::string forged = "x\x1b[31m\nerror: forged";
    const Tensor one{1.0f};
    hf::write_safetensors(dir / "names.safetensors", {hf::f32(forged, one)}, {{"note\x07", "line\nbreak"}});
    const Result r = run_remat({"info", (dir / "names.safetensors").string()});
    CHECK(r.code == 0);
    CHECK(r.out.find("  x\\x1b[31m\\x0aerror: forged F32 (1,) [0, 4)\n") != std::string::npos);
    CHECK(r.out.find("  note\\x07: line\\x0abreak\n") != std::string::npos);
    CHECK(r.out.find('\x1b') == std::string::npos);
    // In an error: a model_type from the file, quoted and escaped on the one line.
    const fs::path type = model_with("escaped-type", [&](auto& c) { c["model_type"] = forged; });
    refused({"info", type.string()},
            (type / "config.json").string() + ": unsupported model_type \"x\\x1b[31m\\x0aerror: forged\" (remat supports ...");
}

TEST_CASE("9. run sizes are bounded up front, before the model is loaded") {
    refused({"train", tiny.string(), "--data", "x", "--batch", "1000000000"}, "--batch must be a whole number from 1 to 1048576, got \"1000000000\"");
    refused({"run", tiny.string(), "--input", "x", "--out", "y", "--repeat", "1000000000000"},
            "--repeat must be a whole number from 1 to 1000000, got \"1000000000000\"");
    refused({"train", tiny.string(), "--data", "x", "--steps", "100000000000"}, "--steps must be a whole number from 1 to 10000000000, got \"100000000000\"");
    // Within the flags' bounds, but the logits alone cannot fit: refused before loading.
    const fs::path bytes = place("bytes-model-2");
    REQUIRE(run_remat({"init", bytes.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                       "--vocab-size", "256", "--n-positions", "32"}).code == 0);
    write_text(scratch() / "hostile" / "c.txt", std::string(4000, 'a'));
    refused({"train", bytes.string(), "--data", (scratch() / "hostile" / "c.txt").string(), "--batch", "1000000", "--seq", "32"},
            "--batch 1000000 --seq 32: this run needs at least ...");
}
