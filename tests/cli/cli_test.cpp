// The `remat` command line against its contract (docs/cli.md): the built binary is run as a user
// would run it (path in $REMAT_BIN), and its exit code, stdout and exact stderr lines are checked.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "models/bert/pretrained.hpp"
#include "models/gpt2/pretrained.hpp"
#include "remat/hf/load.hpp"
#include "remat/hf/safetensors.hpp"

extern char** environ;

using namespace remat;
namespace fs = std::filesystem;

namespace {
const fs::path fixtures = REMAT_FIXTURES;

// A scratch folder for the whole run, removed at exit.
struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("remat-cli-test-" + std::to_string(::getpid()));
    Scratch() { fs::create_directories(dir); }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};
const fs::path& scratch() {
    static Scratch s;
    return s.dir;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
void write_text(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

struct Result {
    int code = -1;
    std::string out, err;
};

// Runs $REMAT_BIN with the arguments, stdout and stderr captured through files.
Result run_remat(const std::vector<std::string>& args) {
    const char* bin = std::getenv("REMAT_BIN");
    REQUIRE_MESSAGE(bin != nullptr, "set REMAT_BIN to the built remat binary");
    const fs::path out = scratch() / "stdout", err = scratch() / "stderr";
    std::vector<char*> argv{const_cast<char*>(bin)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    const int spawned = posix_spawn(&pid, bin, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE_MESSAGE(WIFEXITED(status), "remat was killed by signal " << WTERMSIG(status));
    return {WEXITSTATUS(status), read_text(out), read_text(err)};
}

// The failure contract: exit code 2, nothing on stdout, exactly the one given line on stderr.
void check_error(const std::vector<std::string>& args, const std::string& message) {
    const Result r = run_remat(args);
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "error: " + message + "\n");
}

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// An IN file of the given integer tensors.
void write_ids(const fs::path& path, const std::vector<std::pair<std::string, IdTensor>>& tensors) {
    std::vector<hf::WriteTensor> entries;
    for (const auto& [name, t] : tensors) entries.push_back(hf::i64(name, t));
    hf::write_safetensors(path, entries);
}

IdTensor ids_of(std::initializer_list<std::size_t> shape, std::int64_t value) {
    IdTensor t = IdTensor::from_shape(shape);
    std::fill(t.begin(), t.end(), value);
    return t;
}

double scalar_f64(const hf::SafetensorsFile& f, const std::string& name) {
    const hf::TensorInfo* t = f.find(name);
    REQUIRE_MESSAGE(t != nullptr, name);
    REQUIRE(t->dtype == hf::DType::F64);
    REQUIRE(t->shape.empty());
    double v;
    std::memcpy(&v, f.bytes(*t).data(), sizeof v);
    return v;
}

// max |got − expected| relative to the expected tensor's largest magnitude, floored at 1e-3.
double relative_difference(const Tensor& got, const Tensor& expected) {
    REQUIRE(got.shape() == expected.shape());
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(got.data()[i]) - expected.data()[i]));
        scale = std::max(scale, std::abs(static_cast<double>(expected.data()[i])));
    }
    return worst / std::max(scale, 1e-3);
}

bool same_bytes(const hf::SafetensorsFile& a, const hf::SafetensorsFile& b, const std::string& name) {
    const auto x = a.bytes(*a.find(name)), y = b.bytes(*b.find(name));
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size()) == 0;
}

// Runs the reference's inputs through `remat run --grads` with policies none and blocks; checks
// logits, loss and every gradient against the PyTorch reference, and blocks bitwise against none.
void golden(const std::string& model, const std::vector<std::string>& inputs, std::size_t parameter_count) {
    const auto reference = hf::SafetensorsFile::open(fixtures / (model + "-reference.safetensors"));
    std::vector<std::pair<std::string, IdTensor>> in;
    for (const auto& name : inputs) in.emplace_back(name, reference.read_int(*reference.find(name)));
    const fs::path in_path = scratch() / (model + "-in.safetensors");
    write_ids(in_path, in);

    std::vector<hf::SafetensorsFile> outs;
    for (const std::string policy : {"none", "blocks"}) {
        CAPTURE(policy);
        const fs::path out = scratch() / (model + "-" + policy + ".safetensors");
        const Result r = run_remat({"run", (fixtures / model).string(), "--input", in_path.string(), "--out", out.string(),
                                "--grads", "--checkpoint", policy});
        CHECK(r.code == 0);
        const auto f = hf::SafetensorsFile::open(out);
        CHECK(f.find("logits")->dtype == hf::DType::F32);
        CHECK(f.find("loss")->shape.empty());
        const double logits = relative_difference(f.read_float(*f.find("logits")), reference.read_float(*reference.find("logits")));
        MESSAGE(model << " " << policy << ": logits differ by " << logits << " of the largest logit");
        CHECK(logits < 1e-5);
        CHECK(f.read_float(*f.find("loss"))() ==
              doctest::Approx(reference.read_float(*reference.find("loss"))()).epsilon(1e-5));
        std::size_t grads = 0;
        double worst = 0;
        for (const hf::TensorInfo& t : f.tensors()) {
            if (t.name.rfind("grad.", 0) != 0) continue;
            CAPTURE(t.name);
            const hf::TensorInfo* ref = reference.find(t.name);
            REQUIRE(ref != nullptr);
            const double d = relative_difference(f.read_float(t), reference.read_float(*ref));
            worst = std::max(worst, d);
            CHECK(d < 1e-4);
            ++grads;
        }
        MESSAGE(model << " " << policy << ": largest gradient difference " << worst);
        CHECK(grads == parameter_count);
        CHECK(scalar_f64(f, "stats.seconds") > 0);
        CHECK(scalar_f64(f, "stats.peak_activation_bytes") > 0);
        outs.push_back(hf::SafetensorsFile::open(out));
    }
    CHECK(same_bytes(outs[0], outs[1], "logits"));
    CHECK(same_bytes(outs[0], outs[1], "loss"));
    for (const hf::TensorInfo& t : outs[0].tensors())
        if (t.name.rfind("grad.", 0) == 0) {
            CAPTURE(t.name);
            CHECK(same_bytes(outs[0], outs[1], t.name));
        }
}
}  // namespace

TEST_CASE("help and usage") {
    for (std::vector<std::string> args : {std::vector<std::string>{}, {"--help"}, {"-h"}}) {
        const Result r = run_remat(args);
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        CHECK(r.out.find("info") != std::string::npos);
        CHECK(r.out.find("run") != std::string::npos);
    }
    Result r = run_remat({"info", "--help"});
    CHECK(r.code == 0);
    CHECK(r.out.find("Usage: remat info [OPTIONS] PATH") != std::string::npos);
    r = run_remat({"run", "--help"});
    CHECK(r.code == 0);
    for (const char* flag : {"--input", "--out", "--grads", "--checkpoint", "--repeat"}) CHECK(r.out.find(flag) != std::string::npos);

    check_error({"bogus"}, "unknown command \"bogus\" (the commands are info and run; see remat --help)");
    check_error({"--bogus"}, "The following argument was not expected: --bogus (see remat --help)");
    check_error({"info"}, "PATH is required (see remat info --help)");
    check_error({"run"}, "DIR is required (see remat run --help)");
    check_error({"run", "x", "--out", "o.safetensors"}, "--input is required (see remat run --help)");
    check_error({"run", "x", "-i", "in", "-o", "out", "--repeat", "many"},
                "--repeat must be a whole number of passes, got \"many\"");
    check_error({"run", "x", "-i", "in", "-o", "out", "--repeat", "99999999999999999999"},
                "--repeat must be a whole number of passes, got \"99999999999999999999\"");
}

TEST_CASE("info on a model folder") {
    SUBCASE("GPT-2") {
        const Result r = run_remat({"info", (fixtures / "gpt2-tiny").string()});
        CHECK(r.code == 0);
        CHECK(r.err.empty());  // no load warnings: the attn.bias buffers are known
        CHECK(has_line(r.out, "architecture: GPT2LMHeadModel"));
        CHECK(has_line(r.out, "  n_layer: 2"));
        CHECK(has_line(r.out, "  layer_norm_epsilon: 1e-05"));
        CHECK(has_line(r.out, "  h.0.attn.c_attn.weight F32 (16, 48)"));
        CHECK(has_line(r.out, "checkpoint: " + (fixtures / "gpt2-tiny" / "model.safetensors").string() + " (30 tensors)"));
        auto model = gpt2::from_pretrained(fixtures / "gpt2-tiny");
        CHECK(has_line(r.out, "parameters: " + std::to_string(tree::count_parameters(model))));
    }
    SUBCASE("BERT: unused tensors are a warning") {
        const Result r = run_remat({"info", (fixtures / "bert-tiny").string()});
        CHECK(r.code == 0);
        CHECK(r.err == "warning: 4 tensors in " + (fixtures / "bert-tiny" / "model.safetensors").string() +
                           " are not used by the model: bert.pooler.dense.weight bert.pooler.dense.bias "
                           "cls.seq_relationship.weight cls.seq_relationship.bias\n");
        CHECK(has_line(r.out, "architecture: BertForMaskedLM"));
        CHECK(has_line(r.out, "  hidden_act: gelu"));
        auto model = bert::from_pretrained(fixtures / "bert-tiny");
        CHECK(has_line(r.out, "parameters: " + std::to_string(tree::count_parameters(model))));
    }
    SUBCASE("a BertModel checkpoint") {
        const fs::path dir = scratch() / "bert-base-arch";
        bert::Config c = bert::Config::from_file(fixtures / "bert-tiny" / "config.json");
        Generator init(1);
        auto model = bert::create_base(c, init);
        std::string json = c.to_json();
        json.replace(json.find("BertForMaskedLM"), 15, "BertModel");
        hf::save(model, json, dir);
        const Result r = run_remat({"info", dir.string()});
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        CHECK(has_line(r.out, "architecture: BertModel"));
        CHECK(has_line(r.out, "parameters: " + std::to_string(tree::count_parameters(model))));
        check_error({"run", dir.string(), "-i", "in.safetensors", "-o", (scratch() / "o.safetensors").string()},
                    (dir / "config.json").string() +
                        ": BertModel has no language-model head to compute logits; remat run needs GPT2LMHeadModel "
                        "or BertForMaskedLM");
    }
}

TEST_CASE("info on GPT-2 small built from its config: 124439808 parameters") {
    const fs::path dir = scratch() / "gpt2-small";
    {
        Generator init(0);
        auto model = gpt2::create(gpt2::Config{}, init);
        hf::save(model, gpt2::Config{}.to_json(), dir);  // ~500 MB
    }
    const Result r = run_remat({"info", dir.string()});
    fs::remove_all(dir);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK(has_line(r.out, "architecture: GPT2LMHeadModel"));
    CHECK(has_line(r.out, "  n_embd: 768"));
    CHECK(has_line(r.out, "  transformer.h.11.mlp.c_fc.weight F32 (768, 3072)"));
    CHECK(has_line(r.out, "parameters: 124439808"));
}

TEST_CASE("info on a .safetensors file: its header") {
    const fs::path path = scratch() / "header.safetensors";
    IdTensor ids = ids_of({2, 3}, 7);
    const double seconds = 0.5;
    hf::write_safetensors(path, {hf::i64("input_ids", ids), hf::f64_scalar("stats.seconds", seconds)}, {{"note", "hello"}});
    const Result r = run_remat({"info", path.string()});
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "file: " + path.string() +
                       "\n"
                       "tensors: 2 (56 bytes of data)\n"
                       "  input_ids I64 (2, 3) [0, 48)\n"
                       "  stats.seconds F64 () [48, 56)\n"
                       "metadata:\n"
                       "  note: hello\n");
    write_text(scratch() / "garbage.safetensors", "not a safetensors file at all");
    const Result bad = run_remat({"info", (scratch() / "garbage.safetensors").string()});
    CHECK(bad.code == 2);
    CHECK(bad.err.rfind("error: " + (scratch() / "garbage.safetensors").string() + ": ", 0) == 0);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

TEST_CASE("run: GPT-2 golden against PyTorch, policies none and blocks bitwise") {
    golden("gpt2-tiny", {"input_ids", "labels"}, 2 + 2 * 12 + 2);
}

TEST_CASE("run: BERT golden against PyTorch, policies none and blocks bitwise") {
    golden("bert-tiny", {"input_ids", "token_type_ids", "attention_mask", "labels"}, 5 + 2 * 16 + 5);
}

TEST_CASE("run: GPT-2 without labels is language modelling on input_ids; outputs and stats") {
    const auto reference = hf::SafetensorsFile::open(fixtures / "gpt2-tiny-reference.safetensors");
    const fs::path in = scratch() / "lm-in.safetensors", out = scratch() / "lm-out.safetensors";
    write_ids(in, {{"input_ids", reference.read_int(*reference.find("input_ids"))}});
    const Result r = run_remat({"run", (fixtures / "gpt2-tiny").string(), "-i", in.string(), "-o", out.string(), "--repeat", "3",
                            "--checkpoint", "every:2"});
    CHECK(r.code == 0);
    CHECK(r.out.empty());
    CHECK(r.err.empty());
    const auto f = hf::SafetensorsFile::open(out);
    std::vector<std::string> names;
    for (const auto& t : f.tensors()) names.push_back(t.name);
    CHECK(names == std::vector<std::string>{"logits", "loss", "stats.seconds", "stats.peak_activation_bytes"});
    CHECK(f.find("logits")->shape == std::vector<std::size_t>{2, 8, 64});
    CHECK(f.read_float(*f.find("loss"))() ==
          doctest::Approx(reference.read_float(*reference.find("logits_no_labels_loss"))()).epsilon(1e-5));
    CHECK(scalar_f64(f, "stats.seconds") > 0);
    CHECK(scalar_f64(f, "stats.peak_activation_bytes") > 0);
}

TEST_CASE("run: BERT without labels writes logits and stats only") {
    const auto reference = hf::SafetensorsFile::open(fixtures / "bert-tiny-reference.safetensors");
    const fs::path in = scratch() / "mlm-in.safetensors", out = scratch() / "mlm-out.safetensors";
    write_ids(in, {{"input_ids", reference.read_int(*reference.find("input_ids"))},
                   {"token_type_ids", reference.read_int(*reference.find("token_type_ids"))},
                   {"attention_mask", reference.read_int(*reference.find("attention_mask"))}});
    const Result r = run_remat({"run", (fixtures / "bert-tiny").string(), "-i", in.string(), "-o", out.string()});
    CHECK(r.code == 0);
    const auto f = hf::SafetensorsFile::open(out);
    CHECK(f.find("loss") == nullptr);
    CHECK(relative_difference(f.read_float(*f.find("logits")), reference.read_float(*reference.find("logits"))) < 1e-5);
    CHECK(scalar_f64(f, "stats.seconds") > 0);
}

TEST_CASE("run: checkpointing lowers the measured peak activation memory") {
    gpt2::Config c;
    c.vocab_size = 128;
    c.n_positions = 128;
    c.n_embd = 64;
    c.n_layer = 8;
    c.n_head = 4;
    const fs::path dir = scratch() / "gpt2-deep";
    {
        Generator init(3);
        auto model = gpt2::create(c, init);
        hf::save(model, c.to_json(), dir);
    }
    IdTensor ids = IdTensor::from_shape({2, 128});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 37) % 128);
    const fs::path in = scratch() / "deep-in.safetensors";
    write_ids(in, {{"input_ids", ids}});
    std::map<std::string, double> peak;
    for (const std::string policy : {"none", "blocks", "sqrt", "selective"}) {
        const fs::path out = scratch() / ("deep-" + policy + ".safetensors");
        const Result r = run_remat({"run", dir.string(), "-i", in.string(), "-o", out.string(), "--checkpoint", policy, "--grads"});
        REQUIRE(r.code == 0);
        peak[policy] = scalar_f64(hf::SafetensorsFile::open(out), "stats.peak_activation_bytes");
        MESSAGE(policy << ": peak activation " << peak[policy] << " bytes");
    }
    // The logits alone are 2·128·128·4 = 131072 bytes, included in every peak.
    CHECK(peak["none"] > 131072);
    CHECK(peak["blocks"] < peak["none"] / 2);
    CHECK(peak["sqrt"] < peak["none"]);
    CHECK(peak["selective"] < peak["none"]);
    CHECK(peak["blocks"] <= peak["selective"]);
}

TEST_CASE("run: every bad input is one error line and exit code 2") {
    const fs::path s = scratch() / "bad";
    fs::create_directories(s);
    const std::string gpt2_dir = (fixtures / "gpt2-tiny").string(), bert_dir = (fixtures / "bert-tiny").string();
    const std::string out = (s / "out.safetensors").string();
    const fs::path good = s / "good.safetensors";
    write_ids(good, {{"input_ids", ids_of({2, 8}, 1)}});
    auto run = [&](const std::string& dir, const fs::path& in, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"run", dir, "--input", in.string(), "--out", out};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };

    SUBCASE("the model folder") {
        check_error(run((s / "nope").string(), good), (s / "nope").string() + ": no such file or folder");
        fs::create_directories(s / "empty");
        check_error(run((s / "empty").string(), good),
                    (s / "empty").string() + ": no config.json (a model folder holds config.json and model.safetensors)");
        write_text(s / "nofield" / "config.json", R"({"model_type": "gpt2", "vocab_size": 64, "n_embd": 16, "n_head": 2, "n_positions": 16})");
        check_error(run((s / "nofield").string(), good), (s / "nofield" / "config.json").string() + ": missing field n_layer");
        write_text(s / "llama" / "config.json", R"({"model_type": "llama", "vocab_size": 64})");
        check_error(run((s / "llama").string(), good),
                    (s / "llama" / "config.json").string() + ": unsupported model_type \"llama\" (remat supports gpt2 and bert)");
        check_error({"info", (s / "llama").string()},
                    (s / "llama" / "config.json").string() + ": unsupported model_type \"llama\" (remat supports gpt2 and bert)");
        write_text(s / "noweights" / "config.json", read_text(fixtures / "gpt2-tiny" / "config.json"));
        check_error(run((s / "noweights").string(), good),
                    (s / "noweights").string() + ": no model.safetensors, model.safetensors.index.json or pytorch_model.bin");
    }
    SUBCASE("the input file") {
        check_error(run(gpt2_dir, s / "missing.safetensors"), (s / "missing.safetensors").string() + ": cannot open: No such file or directory");
        const fs::path in = s / "in.safetensors";
        write_ids(in, {{"labels", ids_of({2, 8}, 1)}});
        check_error(run(gpt2_dir, in), in.string() + ": no tensor \"input_ids\" (the token ids, I64 of shape (B, T))");

        Tensor floats = zeros(Shape{2, 8});
        hf::write_safetensors(in, {hf::f32("input_ids", floats)});
        check_error(run(gpt2_dir, in), in.string() + ": tensor \"input_ids\" is F32, expected I64");

        write_ids(in, {{"input_ids", ids_of({16}, 1)}});
        check_error(run(gpt2_dir, in), in.string() + ": tensor \"input_ids\" has shape (16,), expected (B, T)");

        IdTensor ids = ids_of({2, 8}, 1);
        ids(1, 3) = 64;
        write_ids(in, {{"input_ids", ids}});
        check_error(run(gpt2_dir, in), in.string() + ": input_ids[1, 3] = 64 is out of range for vocab_size 64");
        ids(1, 3) = -1;
        write_ids(in, {{"input_ids", ids}});
        check_error(run(bert_dir, in), in.string() + ": input_ids[1, 3] = -1 is out of range for vocab_size 64");

        write_ids(in, {{"input_ids", ids_of({1, 17}, 1)}});
        check_error(run(gpt2_dir, in), in.string() + ": input_ids has 17 tokens per sequence, more than the model's 16 positions");

        write_ids(in, {{"input_ids", ids_of({2, 8}, 1)}, {"labels", ids_of({2, 7}, 1)}});
        check_error(run(gpt2_dir, in), in.string() + ": tensor \"labels\" has shape (2, 7), expected (2, 8) as input_ids");
        IdTensor labels = ids_of({2, 8}, -100);
        labels(0, 5) = 70;
        write_ids(in, {{"input_ids", ids_of({2, 8}, 1)}, {"labels", labels}});
        check_error(run(bert_dir, in), in.string() + ": labels[0, 5] = 70 is out of range for vocab_size 64 (-100 = ignore)");

        write_ids(in, {{"input_ids", ids_of({2, 8}, 1)}, {"token_type_ids", ids_of({2, 8}, 2)}});
        check_error(run(bert_dir, in), in.string() + ": token_type_ids[0, 0] = 2 is out of range for type_vocab_size 2");
        write_ids(in, {{"input_ids", ids_of({2, 8}, 1)}, {"token_type_ids", ids_of({2, 8}, 0)}});
        check_error(run(gpt2_dir, in), in.string() + ": tensor \"token_type_ids\": this model takes no token type ids");
        {  // GPT-2 takes HF's padding masks: a padded key changes nothing before it or beside it
            IdTensor mask = ids_of({2, 8}, 1);
            mask(1, 2) = 0;
            IdTensor other = ids_of({2, 8}, 1);
            other(1, 2) = 5;  // the content of the padded position
            write_ids(in, {{"input_ids", ids_of({2, 8}, 1)}, {"attention_mask", mask}});
            REQUIRE(run_remat(run(gpt2_dir, in)).code == 0);
            const auto first = hf::SafetensorsFile::open(out);
            const Tensor a = first.read_float(*first.find("logits"));
            write_ids(in, {{"input_ids", other}, {"attention_mask", mask}});
            REQUIRE(run_remat(run(gpt2_dir, in)).code == 0);
            const auto file = hf::SafetensorsFile::open(out);
            const Tensor b = file.read_float(*file.find("logits"));
            for (std::size_t t : {0, 1, 3, 7})
                for (std::size_t v = 0; v < 64; ++v) CHECK(a(1, t, v) == b(1, t, v));
            CHECK(a(1, 2, 0) != b(1, 2, 0));  // only the padded position itself differs
            fs::remove(out);
        }
        write_ids(in, {{"input_ids", ids_of({2, 8}, 1)}, {"attention_mask", ids_of({2, 8}, 3)}});
        check_error(run(bert_dir, in), in.string() + ": attention_mask[0, 0] = 3, expected 0 or 1");

        check_error(run(bert_dir, good, {"--grads"}),
                    good.string() + ": no tensor \"labels\": --grads needs a loss, and BERT's masked-LM loss needs labels");
    }
    SUBCASE("the options") {
        check_error(run(gpt2_dir, good, {"--checkpoint", "most"}),
                    "--checkpoint: unknown checkpoint policy 'most' (expected none, blocks, every:K, sqrt or selective)");
        check_error(run(gpt2_dir, good, {"--checkpoint", "every:0"}), "--checkpoint: checkpoint policy every:K needs K ≥ 1");
        check_error(run(gpt2_dir, good, {"--repeat", "0"}), "--repeat must be at least 1, got 0");
    }
    SUBCASE("the output") {
        const std::string missing = (s / "no-such-folder" / "out.safetensors").string();
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", missing},
                    missing + ": cannot write: folder " + (s / "no-such-folder").string() + " does not exist");
        write_text(s / "a-file", "x");
        const std::string under_file = (s / "a-file" / "out.safetensors").string();
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", under_file},
                    under_file + ": cannot write: folder " + (s / "a-file").string() + " does not exist");
        // Unwritable even for root: /proc refuses new files.
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", "/proc/remat-out.safetensors"},
                    "/proc/remat-out.safetensors: cannot write in folder /proc: No such file or directory");
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", s.string()}, s.string() + ": cannot write: it is a folder");
    }
    CHECK_FALSE(fs::exists(out));  // a failed run writes nothing
}
