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

#include <nlohmann/json.hpp>

#include "models/architecture.hpp"
#include "remat/hf/load.hpp"
#include "remat/hf/safetensors.hpp"

// fixtures, scratch(), read_text, write_text, Result, run_remat, check_error, has_line, write_ids, ids_of
#include "tests/cli/run_remat.hpp"
#include "tests/support/same_bits.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

// A saved GPT-2 of 8 blocks of width 64 (4 heads) in scratch()/NAME, and NAME-in.safetensors: its
// input_ids (batch, seq), id i being (i · stride) mod vocab. seq is also the model's n_positions.
struct DeepGpt2 {
    fs::path dir, in;
};
DeepGpt2 deep_gpt2(const std::string& name, std::size_t vocab, std::size_t batch, std::size_t seq, std::uint64_t seed,
                   std::size_t stride) {
    const models::Architecture& gpt2 = *models::find_class("GPT2LMHeadModel");
    const std::string config =
        gpt2.config_with({.n_layer = 8, .n_embd = 64, .n_head = 4, .vocab_size = vocab, .n_positions = seq});
    const DeepGpt2 made{scratch() / name, scratch() / (name + "-in.safetensors")};
    Generator init(seed);
    gpt2.create(config, init, nullptr, Policy::none())->save(config, made.dir);
    IdTensor ids = IdTensor::from_shape({batch, seq});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>(i * stride % vocab);
    write_ids(made.in, {{"input_ids", ids}});
    return made;
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
        for (const char* command : {"init", "train", "demo", "info", "run", "encode"}) CHECK(r.out.find(command) != std::string::npos);
    }
    Result r = run_remat({"info", "--help"});
    CHECK(r.code == 0);
    CHECK(r.out.find("Usage: remat info [OPTIONS] PATH") != std::string::npos);
    r = run_remat({"run", "--help"});
    CHECK(r.code == 0);
    for (const char* flag : {"--input", "--out", "--grads", "--checkpoint", "--repeat"}) CHECK(r.out.find(flag) != std::string::npos);

    check_error({"bogus"}, "unknown command \"bogus\" (the commands are init, train, demo, info, run, encode, tokenize, template, generate, plot, plan and merge; see remat --help)");
    check_error({"--bogus"}, "The following argument was not expected: --bogus (see remat --help)");
    check_error({"info"}, "PATH is required (see remat info --help)");
    check_error({"run"}, "DIR is required (see remat run --help)");
    check_error({"run", "x", "--out", "o.safetensors"}, "--input is required (see remat run --help)");
    check_error({"run", "x", "-i", "in", "-o", "out", "--repeat", "many"},
                "--repeat must be a whole number from 1 to 1000000, got \"many\"");
    check_error({"run", "x", "-i", "in", "-o", "out", "--repeat", "99999999999999999999"},
                "--repeat must be a whole number from 1 to 1000000, got \"99999999999999999999\"");
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
        auto model = models::load(*models::find_class("GPT2LMHeadModel"), fixtures / "gpt2-tiny", Policy::none());
        CHECK(has_line(r.out, "parameters: " + std::to_string(model->count_parameters())));
    }
    SUBCASE("BERT: unused tensors are a warning") {
        const Result r = run_remat({"info", (fixtures / "bert-tiny").string()});
        CHECK(r.code == 0);
        CHECK(r.err == "warning: 4 tensors in " + (fixtures / "bert-tiny" / "model.safetensors").string() +
                           " are not used by the model: \"bert.pooler.dense.weight\" \"bert.pooler.dense.bias\" "
                           "\"cls.seq_relationship.weight\" \"cls.seq_relationship.bias\"\n");
        CHECK(has_line(r.out, "architecture: BertForMaskedLM"));
        CHECK(has_line(r.out, "  hidden_act: gelu"));
        hf::LoadReport unused;  // the warning checked above
        auto model = models::load(*models::find_class("BertForMaskedLM"), fixtures / "bert-tiny", Policy::none(),
                                  nullptr, &unused);
        CHECK(has_line(r.out, "parameters: " + std::to_string(model->count_parameters())));
    }
    SUBCASE("a BertModel checkpoint") {
        const fs::path dir = scratch() / "bert-base-arch";
        std::string json = read_text(fixtures / "bert-tiny" / "config.json");
        json.replace(json.find("BertForMaskedLM"), 15, "BertModel");
        Generator init(1);
        auto model = models::find_class("BertModel")->create(json, init, nullptr, Policy::none());
        model->save(json, dir);
        const Result r = run_remat({"info", dir.string()});
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        CHECK(has_line(r.out, "architecture: BertModel"));
        CHECK(has_line(r.out, "parameters: " + std::to_string(model->count_parameters())));
        check_error({"run", dir.string(), "-i", "in.safetensors", "-o", (scratch() / "o.safetensors").string()},
                    (dir / "config.json").string() +
                        ": BertModel has no language-model head to compute logits; remat run needs GPT2LMHeadModel, "
                        "BertForMaskedLM, LlamaForCausalLM, Qwen2ForCausalLM or MistralForCausalLM");
    }
}

TEST_CASE("info on GPT-2 small built from its config: 124439808 parameters") {
    const fs::path dir = scratch() / "gpt2-small";
    {
        const models::Architecture& gpt2 = *models::find_class("GPT2LMHeadModel");
        const std::string config = gpt2.config_with({});  // GPT-2 small
        Generator init(0);
        gpt2.create(config, init, nullptr, Policy::none())->save(config, dir);  // ~500 MB
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
    const DeepGpt2 deep = deep_gpt2("gpt2-deep", 128, 2, 128, 3, 37);
    const fs::path &dir = deep.dir, &in = deep.in;
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

    SUBCASE("--checkpoint budget:SIZE plans within the budget; gradients as none's") {
        const auto budget = static_cast<std::size_t>((peak["blocks"] + peak["none"]) / 2);
        const fs::path out = scratch() / "deep-budget.safetensors";
        const std::string spec = "budget:" + std::to_string(budget) + "B";
        const Result r = run_remat({"run", dir.string(), "-i", in.string(), "-o", out.string(), "--checkpoint", spec, "--grads"});
        REQUIRE(r.code == 0);
        CHECK(r.out.rfind("checkpointing " + spec + ": plan:", 0) == 0);
        const auto planned = hf::SafetensorsFile::open(out), none = hf::SafetensorsFile::open(scratch() / "deep-none.safetensors");
        CHECK(scalar_f64(planned, "stats.peak_activation_bytes") <= static_cast<double>(budget));
        CHECK(scalar_f64(planned, "stats.peak_activation_bytes") < peak["none"]);
        for (const std::string name : {"grad.transformer.h.0.attn.c_attn.weight", "grad.transformer.wte.weight"})
            CHECK(test::same_bits(planned.read_float(*planned.find(name)), none.read_float(*none.find(name))));
    }
    SUBCASE("--checkpoint auto fits the memory left: with 24 GiB, no recomputation") {
        const fs::path out = scratch() / "deep-auto.safetensors";
        const Result r = run_remat({"run", dir.string(), "-i", in.string(), "-o", out.string(), "--checkpoint", "auto"});
        REQUIRE(r.code == 0);
        CHECK(r.out.rfind("checkpointing auto: ", 0) == 0);
        CHECK(r.out.find("plan:8n (blocks 0-7 plain)") != std::string::npos);
    }
    SUBCASE("a budget nothing fits names the smallest that does") {
        const Result r = run_remat({"run", dir.string(), "-i", in.string(), "-o", (scratch() / "x.safetensors").string(),
                                    "--checkpoint", "budget:1KB"});
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("error: --checkpoint budget:1KB: no checkpointing plan fits 1000 bytes of activations for this "
                          "model and batch; the smallest that fits is ", 0) == 0);
        CHECK(r.err.find("(budget:") != std::string::npos);
        CHECK(!fs::exists(scratch() / "x.safetensors"));
    }
}

TEST_CASE("run: a budget that a fixed policy meets, as measured, is met by a plan") {
    // run keeps the logits through the backward to write them out: the plan must count them where they
    // are alive, not on top of the whole step. Logits (4·64·2048·4 bytes, 2 MiB) as large as a few blocks'
    // activations make the difference show.
    const DeepGpt2 deep = deep_gpt2("gpt2-wide-vocab", 2048, 4, 64, 5, 101);
    const fs::path &dir = deep.dir, &in = deep.in;
    const fs::path out = scratch() / "wide-vocab-out.safetensors";
    auto peak_of = [&](const std::string& checkpoint) {
        const Result r = run_remat({"run", dir.string(), "-i", in.string(), "-o", out.string(), "--checkpoint", checkpoint});
        REQUIRE(r.code == 0);
        return scalar_f64(hf::SafetensorsFile::open(out), "stats.peak_activation_bytes");
    };
    for (const std::string policy : {"none", "blocks", "every:2", "every:3", "sqrt", "selective"}) {
        CAPTURE(policy);
        const double measured = peak_of(policy);
        const std::string budget = "budget:" + std::to_string(static_cast<std::size_t>(measured)) + "B";
        CAPTURE(budget);
        CHECK(peak_of(budget) <= measured);
    }
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
        write_text(s / "mamba" / "config.json", R"({"model_type": "mamba", "vocab_size": 64})");
        const std::string unsupported = ": unsupported model_type \"mamba\" (remat supports gpt2, bert, llama, qwen2 and mistral)";
        check_error(run((s / "mamba").string(), good), (s / "mamba" / "config.json").string() + unsupported);
        check_error({"info", (s / "mamba").string()}, (s / "mamba" / "config.json").string() + unsupported);
        write_text(s / "llama" / "config.json", R"({"model_type": "llama", "vocab_size": 64})");
        check_error(run((s / "llama").string(), good), (s / "llama" / "config.json").string() + ": missing field hidden_size");
        write_text(s / "noweights" / "config.json", read_text(fixtures / "gpt2-tiny" / "config.json"));
        check_error(run((s / "noweights").string(), good),
                    (s / "noweights").string() + ": no model.safetensors, model.safetensors.index.json or pytorch_model.bin");
    }
    SUBCASE("the input file") {
        check_error(run(gpt2_dir, s / "missing.safetensors"), (s / "missing.safetensors").string() + ": cannot read: No such file or directory");
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
                    "--checkpoint: unknown checkpoint policy 'most' (expected none, blocks, every:K, sqrt, selective, selective:KINDS, budget:SIZE, auto or plan:TEXT)");
        check_error(run(gpt2_dir, good, {"--checkpoint", "every:0"}), "--checkpoint: checkpoint policy every:K needs K ≥ 1");
        check_error(run(gpt2_dir, good, {"--repeat", "0"}), "--repeat must be a whole number from 1 to 1000000, got \"0\"");
    }
    SUBCASE("the output") {
        const std::string missing = (s / "no-such-folder" / "out.safetensors").string();
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", missing},
                    missing + ": cannot write: folder " + (s / "no-such-folder").string() + " does not exist");
        write_text(s / "a-file", "x");
        const std::string under_file = (s / "a-file" / "out.safetensors").string();
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", under_file},
                    under_file + ": cannot write: folder " + (s / "a-file").string() + " is not a folder");
        // Unwritable even for root: /proc refuses new files.
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", "/proc/remat-out.safetensors"},
                    "/proc/remat-out.safetensors: cannot write in folder /proc: No such file or directory");
        check_error({"run", gpt2_dir, "-i", good.string(), "-o", s.string()}, s.string() + ": cannot write: it is a folder");
    }
    CHECK_FALSE(fs::exists(out));  // a failed run writes nothing
}

// ---- init, train, demo ----------------------------------------------------------------------

namespace {
// A small byte-level GPT-2 folder made by `remat init` (no tokenizer files: raw bytes).
// Made once per name: doctest runs a TEST_CASE again for each of its SUBCASEs.
fs::path tiny_gpt2(const std::string& name, const std::string& seed = "1") {
    const fs::path dir = scratch() / name;
    if (fs::exists(dir / "model.safetensors")) return dir;
    const Result r = run_remat({"init", dir.string(), "--arch", "gpt2", "--n-layer", "2", "--n-embd", "32", "--n-head", "4",
                                "--vocab-size", "256", "--n-positions", "64", "--seed", seed});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    return dir;
}

const std::string some_text =
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, "
    "it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, it was the season of "
    "Darkness, it was the spring of hope, it was the winter of despair.\n";

std::string file_bytes(const fs::path& p) { return read_text(p); }

// Mean and standard deviation of a tensor's values.
std::pair<double, double> moments(const Tensor& t) {
    double sum = 0, sq = 0;
    for (float v : t) sum += v;
    const double mean = sum / static_cast<double>(t.size());
    for (float v : t) sq += (v - mean) * (v - mean);
    return {mean, std::sqrt(sq / static_cast<double>(t.size()))};
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}
}  // namespace

TEST_CASE("init writes a HuggingFace model folder, deterministically for a seed") {
    const fs::path s = scratch() / "init";
    SUBCASE("GPT-2: HF's initialisation, loadable by info, the same bytes for the same seed") {
        const fs::path a = tiny_gpt2("init/a", "7"), b = tiny_gpt2("init/b", "7"), c = tiny_gpt2("init/c", "8");
        CHECK(file_bytes(a / "model.safetensors") == file_bytes(b / "model.safetensors"));
        CHECK(file_bytes(a / "config.json") == file_bytes(b / "config.json"));
        CHECK(file_bytes(a / "model.safetensors") != file_bytes(c / "model.safetensors"));

        const Result info = run_remat({"info", a.string()});
        CHECK(info.code == 0);
        CHECK(info.err.empty());
        CHECK(has_line(info.out, "architecture: GPT2LMHeadModel"));
        // wte 256·32 + wpe 64·32 + 2 blocks · (2·64 + 32·96+96 + 32·32+32 + 32·128+128 + 128·32+32) + ln_f 64
        CHECK(has_line(info.out, "parameters: " + std::to_string(256 * 32 + 64 * 32 + 2 * (128 + 3168 + 1056 + 4224 + 4128) + 64)));

        const auto f = hf::SafetensorsFile::open(a / "model.safetensors");
        const auto [wte_mean, wte_std] = moments(f.read_float(*f.find("transformer.wte.weight")));
        CHECK(std::abs(wte_mean) < 0.002);
        CHECK(wte_std == doctest::Approx(0.02).epsilon(0.05));
        // HF scales c_proj weights by 1/sqrt(2·n_layer).
        const auto [proj_mean, proj_std] = moments(f.read_float(*f.find("transformer.h.1.mlp.c_proj.weight")));
        CHECK(proj_std == doctest::Approx(0.02 / 2).epsilon(0.05));
        const Tensor ln = f.read_float(*f.find("transformer.h.0.ln_1.weight"));
        CHECK(std::all_of(ln.begin(), ln.end(), [](float v) { return v == 1.0f; }));
        const Tensor bias = f.read_float(*f.find("transformer.h.0.attn.c_attn.bias"));
        CHECK(std::all_of(bias.begin(), bias.end(), [](float v) { return v == 0.0f; }));
        CHECK(f.find("lm_head.weight") == nullptr);  // tied to wte, as HF saves it

        const auto config = nlohmann::json::parse(file_bytes(a / "config.json"));
        CHECK(config["model_type"] == "gpt2");
        CHECK(config["n_layer"] == 2);
        CHECK(config["vocab_size"] == 256);
        CHECK(config["eos_token_id"] == 255);
    }
    SUBCASE("BERT") {
        const fs::path dir = s / "bert";
        const Result r = run_remat({"init", dir.string(), "--arch", "bert", "--n-layer", "2", "--n-embd", "32", "--n-head",
                                    "2", "--vocab-size", "100", "--n-positions", "40"});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.out.find("wrote " + dir.string() + ": BertForMaskedLM (num_hidden_layers 2, hidden_size 32") == 0);
        const Result info = run_remat({"info", dir.string()});
        CHECK(info.code == 0);
        CHECK(info.err.empty());  // every tensor a BertForMaskedLM needs, nothing unused
        CHECK(has_line(info.out, "  intermediate_size: 128"));
        const auto f = hf::SafetensorsFile::open(dir / "model.safetensors");
        const Tensor words = f.read_float(*f.find("bert.embeddings.word_embeddings.weight"));
        for (std::size_t j = 0; j < 32; ++j) CHECK(words(0, j) == 0.0f);  // HF zeroes the padding_idx row
        CHECK(words(1, 0) != 0.0f);
    }
    SUBCASE("Llama family: every config field by its flag, in HF's layout; trains and runs") {
        const fs::path dir = s / "llama";
        const Result r = run_remat({"init", dir.string(), "--arch", "llama", "--n-layer", "2", "--hidden-size", "32",
                                    "--num-attention-heads", "4", "--num-key-value-heads", "1", "--vocab-size", "256",
                                    "--intermediate-size", "48", "--head-dim", "6", "--rope-theta", "500000",
                                    "--tie-word-embeddings", "true", "--hidden-act", "silu", "--rope-scaling",
                                    R"({"rope_type": "linear", "factor": 2})"});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.out.find("wrote " + dir.string() + ": LlamaForCausalLM (num_hidden_layers 2, hidden_size 32") == 0);
        const auto config = nlohmann::json::parse(file_bytes(dir / "config.json"));
        CHECK(config["num_key_value_heads"] == 1);
        CHECK(config["head_dim"] == 6);
        CHECK(config["rope_theta"] == 500000.0);
        CHECK(config["tie_word_embeddings"] == true);
        CHECK(config["rope_scaling"]["rope_type"] == "linear");
        const auto f = hf::SafetensorsFile::open(dir / "model.safetensors");
        CHECK(f.find("model.layers.1.self_attn.k_proj.weight")->shape == std::vector<std::size_t>{6, 32});
        CHECK(f.find("lm_head.weight") == nullptr);  // tied
        const Result info = run_remat({"info", dir.string()});
        CHECK(info.code == 0);
        CHECK(info.err.empty());
        // embed 256·32 + 2 · (q 32·24 + k, v 2·32·6 + o 24·32 + mlp 3·32·48 + norms 2·32) + norm 32
        CHECK(has_line(info.out, "parameters: " + std::to_string(256 * 32 + 2 * (768 + 384 + 768 + 4608 + 64) + 32)));
        write_text(s / "text.txt", std::string(4000, 'a') + "bcdefgh");
        const Result train = run_remat({"train", dir.string(), "--data", (s / "text.txt").string(), "--steps", "2",
                                        "--batch", "2", "--seq", "16", "--checkpoint", "blocks"});
        CAPTURE(train.err);
        CHECK(train.code == 0);
        check_error({"init", (s / "q").string(), "--arch", "qwen2", "--rope-theta", "x"},
                    "remat init: rope_theta must be a number, got \"x\"");
        check_error({"init", (s / "q").string(), "--arch", "gpt2", "--sliding-window", "4"},
                    "--sliding-window: gpt2 configs have no field sliding_window");
        check_error({"init", (s / "q").string(), "--arch", "llama", "--n-head", "4", "--num-attention-heads", "4"},
                    "give --n-head or --num-attention-heads, not both");
        check_error({"init", (s / "q").string(), "--arch", "mistral", "--rope-scaling", R"({"rope_type": "yarn"})"},
                    "remat init: unsupported rope_scaling type \"yarn\" (remat implements \"default\", \"linear\" and \"llama3\")");
    }
    SUBCASE("unset sizes keep HF's defaults") {
        const fs::path dir = s / "defaults";
        const Result r = run_remat({"init", dir.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "8", "--n-head", "2"});
        CHECK(r.code == 0);
        const auto config = nlohmann::json::parse(file_bytes(dir / "config.json"));
        CHECK(config["vocab_size"] == 50257);
        CHECK(config["n_positions"] == 1024);
        CHECK(config["eos_token_id"] == 50256);
        CHECK(config["activation_function"] == "gelu_new");
    }
    SUBCASE("bad input") {
        const fs::path dir = tiny_gpt2("init/existing");
        check_error({"init", dir.string(), "--arch", "gpt2"},
                    dir.string() + ": already holds a model (config.json); pass --force to overwrite it");
        CHECK(run_remat({"init", dir.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "8", "--n-head", "2",
                         "--vocab-size", "16", "--n-positions", "8", "--force"})
                  .code == 0);
        check_error({"init", (s / "x").string(), "--arch", "mamba"},
                    "--arch must be gpt2, bert, llama, qwen2 or mistral, got \"mamba\"");
        check_error({"init", (s / "x").string(), "--arch", "gpt2", "--n-embd", "30", "--n-head", "4"},
                    "GPT-2 config: n_embd = 30 is not divisible by n_head = 4");
        check_error({"init", (s / "x").string(), "--arch", "gpt2", "--n-layer", "0"},
                    "--n-layer must be a whole number from 1 to 16777216, got \"0\"");
        check_error({"init", (s / "x").string()}, "--arch is required (see remat init --help)");
        write_text(s / "a-file", "x");
        check_error({"init", (s / "a-file").string(), "--arch", "gpt2"}, (s / "a-file").string() + ": exists and is not a folder");
        CHECK_FALSE(fs::exists(s / "x"));
    }
}

TEST_CASE("train fine-tunes a GPT-2 folder and saves it") {
    const fs::path s = scratch() / "train";
    const fs::path model = tiny_gpt2("train/model");
    const fs::path data = s / "data.txt";
    write_text(data, some_text);
    auto train = [&](const fs::path& out, const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args{"train", model.string(), "--data", data.string(), "--steps", "6", "--batch", "2",
                                      "--seq", "32", "--lr", "1e-2", "--save", out.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_remat(args);
    };

    SUBCASE("progress lines, a lower loss, a loadable and deterministic result") {
        const Result r = train(s / "out");
        CAPTURE(r.out);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.err == "warning: " + model.string() +
                           " has no vocab.json + merges.txt or tokenizer.json: using raw bytes as token ids\n");
        const auto lines = lines_of(r.out);
        REQUIRE(lines.size() == 3 + 6 + 2);  // header, one line per step (6 steps < 20), summary, saved
        CHECK(lines[0] == "model: " + model.string() + " (GPT2LMHeadModel, 35712 parameters), checkpointing none");
        CHECK(lines[1] == "data: " + data.string() + ": " + std::to_string(some_text.size()) + " tokens, 8 windows of 32 (raw bytes (256 ids))");
        CHECK(lines[2] == "training: 6 steps of 1 x 2 windows of 32 tokens, AdamW (lr 0.01, linear schedule, warmup 0, "
                          "weight decay 0), clip 1, seed 0");
        for (int k = 1; k <= 6; ++k) CHECK(lines[2 + k].find("step " + std::to_string(k) + "/6  loss ") == 0);
        CHECK(lines[3].find("tokens/s  peak activation ") != std::string::npos);
        CHECK(lines[9].find("trained 6 steps in ") == 0);
        CHECK(lines[10] == "saved " + (s / "out").string() + ": config.json, model.safetensors");
        // "loss A -> B": fine-tuning lowers it.
        float first = 0, last = 0;
        REQUIRE(std::sscanf(lines[9].c_str() + lines[9].find("loss "), "loss %f -> %f", &first, &last) == 2);
        CHECK(first == doctest::Approx(std::log(256.0)).epsilon(0.05));  // an untrained model guesses uniformly
        CHECK(last < first - 0.5f);

        CHECK(file_bytes(s / "out" / "config.json") == file_bytes(model / "config.json"));
        CHECK(file_bytes(s / "out" / "model.safetensors") != file_bytes(model / "model.safetensors"));
        CHECK(run_remat({"info", (s / "out").string()}).code == 0);
        // The same seed gives the same model, bit for bit; so does checkpointing every block.
        REQUIRE(train(s / "again").code == 0);
        CHECK(file_bytes(s / "again" / "model.safetensors") == file_bytes(s / "out" / "model.safetensors"));
        const Result blocks = train(s / "blocks", {"--checkpoint", "blocks"});
        REQUIRE(blocks.code == 0);
        CHECK(lines_of(blocks.out)[0].find("checkpointing blocks") != std::string::npos);
        CHECK(file_bytes(s / "blocks" / "model.safetensors") == file_bytes(s / "out" / "model.safetensors"));
        // A plan for a budget, with accumulation: the same bits as none with accumulation.
        const Result planned = train(s / "planned", {"--checkpoint", "budget:300KiB", "--accumulate", "2"});
        CAPTURE(planned.out);
        REQUIRE(planned.code == 0);
        CHECK(lines_of(planned.out)[0].rfind("checkpointing budget:300KiB: plan:", 0) == 0);
        REQUIRE(train(s / "accumulated", {"--accumulate", "2"}).code == 0);
        CHECK(file_bytes(s / "planned" / "model.safetensors") == file_bytes(s / "accumulated" / "model.safetensors"));
        REQUIRE(train(s / "seed", {"--seed", "3"}).code == 0);
        CHECK(file_bytes(s / "seed" / "model.safetensors") != file_bytes(s / "out" / "model.safetensors"));
    }
    SUBCASE("--log-every and no --save") {
        const Result r = run_remat({"train", model.string(), "--data", data.string(), "--steps", "5", "--batch", "1",
                                    "--seq", "16", "--log-every", "2"});
        REQUIRE(r.code == 0);
        const auto lines = lines_of(r.out);
        REQUIRE(lines.size() == 3 + 4 + 1);  // steps 1 (the first), 2, 4 and 5 (the last); the summary
        CHECK(lines[3].find("step 1/5 ") == 0);
        CHECK(lines[4].find("step 2/5 ") == 0);
        CHECK(lines[5].find("step 4/5 ") == 0);
        CHECK(lines[6].find("step 5/5 ") == 0);
        CHECK(lines[7].find("trained 5 steps") == 0);
    }
    SUBCASE("a BPE tokenizer in the folder tokenises the text and is saved along") {
        const fs::path bpe = s / "bpe";  // the fixture tokenizer's ids go up to 576
        REQUIRE(run_remat({"init", bpe.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
                           "--vocab-size", "600", "--n-positions", "32"})
                    .code == 0);
        for (const char* f : {"vocab.json", "merges.txt"}) fs::copy_file(fixtures / "tokenizer" / f, bpe / f);
        const Result r = run_remat({"train", bpe.string(), "--data", data.string(), "--steps", "2", "--batch", "2", "--seq",
                                    "16", "--save", (s / "bpe-out").string()});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.err.empty());
        CHECK(lines_of(r.out)[1].find("GPT-2 byte-level BPE (vocab.json + merges.txt") != std::string::npos);
        CHECK(file_bytes(s / "bpe-out" / "vocab.json") == file_bytes(bpe / "vocab.json"));
        CHECK(file_bytes(s / "bpe-out" / "merges.txt") == file_bytes(bpe / "merges.txt"));
        CHECK(lines_of(r.out).back() == "saved " + (s / "bpe-out").string() + ": config.json, model.safetensors, vocab.json, merges.txt");
    }
    SUBCASE("bad input") {
        const std::string m = model.string();
        write_text(s / "empty.txt", "");
        check_error({"train", m, "--data", (s / "empty.txt").string()},
                    (s / "empty.txt").string() + ": 0 tokens are fewer than one window of 64 (--seq); give more data or a smaller --seq");
        write_text(s / "short.txt", "too short");
        check_error({"train", m, "--data", (s / "short.txt").string(), "--seq", "32"},
                    (s / "short.txt").string() + ": 9 tokens are fewer than one window of 32 (--seq); give more data or a smaller --seq");
        check_error({"train", m, "--data", (s / "none.txt").string()},
                    (s / "none.txt").string() + ": no such file or folder");
        check_error({"train", m, "--data", data.string(), "--seq", "65"}, "--seq 65 is longer than the model's n_positions 64");
        check_error({"train", m, "--data", data.string(), "--seq", "1"}, "--seq must be a whole number from 2 to 16777216, got \"1\"");
        check_error({"train", m, "--data", data.string(), "--lr", "0"}, "--lr must be a number above 0, got \"0\"");
        check_error({"train", m, "--data", data.string(), "--lr", "nan"}, "--lr must be a number above 0, got \"nan\"");
        check_error({"train", m, "--data", data.string(), "--steps", "-3"}, "--steps must be a whole number from 1 to 10000000000, got \"-3\"");
        check_error({"train", m, "--data", data.string(), "--checkpoint", "most"},
                    "--checkpoint: unknown checkpoint policy 'most' (expected none, blocks, every:K, sqrt, selective, selective:KINDS, budget:SIZE, auto or plan:TEXT)");
        check_error({"train", m}, "--data is required (see remat train --help)");
        write_text(s / "a-file", "x");
        const fs::path under_file = s / "a-file" / "out";
        check_error({"train", m, "--data", data.string(), "--save", under_file.string()},
                    under_file.string() + ": cannot create the folder: Not a directory");
        const fs::path bert = s / "bert";
        REQUIRE(run_remat({"init", bert.string(), "--arch", "bert", "--n-layer", "1", "--n-embd", "8", "--n-head", "2",
                           "--vocab-size", "300", "--n-positions", "16"})
                    .code == 0);
        check_error({"train", bert.string(), "--data", data.string()},
                    (bert / "vocab.txt").string() +
                        ": missing; a BertForMaskedLM folder needs its WordPiece vocabulary (vocab.txt, as HF's "
                        "BertTokenizer saves it)");
        const fs::path small_vocab = s / "small-vocab";
        REQUIRE(run_remat({"init", small_vocab.string(), "--arch", "gpt2", "--n-layer", "1", "--n-embd", "8", "--n-head",
                           "2", "--vocab-size", "100", "--n-positions", "16"})
                    .code == 0);
        const Result r = run_remat({"train", small_vocab.string(), "--data", data.string()});
        CHECK(r.code == 2);
        CHECK(lines_of(r.err).size() == 1);
        CHECK(r.err.find("error: ") == 0);
        CHECK(r.err.find("256") != std::string::npos);
    }
}

namespace {
// Runs $REMAT_BIN with stdout on a pseudo-terminal, as a user's terminal; returns what it printed there.
std::string run_on_terminal(const std::vector<std::string>& args) {
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    const std::string slave = ::ptsname(master);
    const pid_t pid = start_remat(args, {slave, O_WRONLY | O_NOCTTY}, {"/dev/null", O_WRONLY});
    std::string out;
    char buffer[4096];
    for (;;) {  // until the child has exited and closed the terminal: read() then fails with EIO
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n <= 0) break;
        out.append(buffer, static_cast<std::size_t>(n));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return out;
}
}  // namespace

TEST_CASE("train on a terminal: one live progress line") {
    const fs::path model = tiny_gpt2("terminal-model");
    write_text(scratch() / "terminal.txt", some_text);
    const std::string out = run_on_terminal({"train", model.string(), "--data", (scratch() / "terminal.txt").string(),
                                             "--steps", "3", "--batch", "1", "--seq", "16"});
    CAPTURE(out);
    // Each step rewrites the line: carriage return, erase to the end of line, the status; one newline at the end.
    for (int k = 1; k <= 3; ++k) CHECK(out.find("\r\033[Kstep " + std::to_string(k) + "/3  loss ") != std::string::npos);
    CHECK(out.find("ETA 0:00\r\n") != std::string::npos);  // the terminal shows "\n" as "\r\n"
    CHECK(out.find("\r\ntrained 3 steps in ") != std::string::npos);
}

TEST_CASE("demo: plain and checkpointed runs side by side, gradients bitwise equal") {
    SUBCASE("the built-in model and text") {
        const Result r = run_remat({"demo", "--steps", "3", "--batch", "2", "--seq", "64"});
        CAPTURE(r.out);
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.err.empty());
        const auto lines = lines_of(r.out);
        CHECK(lines[0] == "remat demo: fine-tunes a GPT-2 twice from the same seed, plainly and with every block checkpointed");
        CHECK(lines[1] == "model: built in, initialised from the seed (GPT-2, 6 layers, n_embd 128, 4 heads, vocabulary 256, 1.24M parameters)");
        CHECK(lines[2] == "text: founding-texts.txt (built in), 3471 bytes, 3471 tokens (raw bytes (256 ids))");
        CHECK(r.out.find("\n                                    plain     checkpointed\n") != std::string::npos);
        for (const char* row : {"\ntime per step ", "\npeak activation memory ", "\nfinal loss "})
            CHECK(r.out.find(row) != std::string::npos);
        CHECK(lines.back() == "max gradient difference: 0");
        // Both runs end at the same loss, printed twice.
        const std::string loss_row = lines[lines.size() - 3];
        REQUIRE(loss_row.find("final loss") == 0);
        float a = 0, b = 0;
        REQUIRE(std::sscanf(loss_row.c_str(), "final loss %f %f", &a, &b) == 2);
        CHECK(a == b);
        // Checkpointing every block keeps less: the memory ratio is printed below 1.
        const std::string memory_row = lines[lines.size() - 4];
        REQUIRE(memory_row.find("peak activation memory") == 0);
        const double ratio = std::stod(memory_row.substr(memory_row.rfind(' ') + 1));
        CHECK(ratio < 0.6);
    }
    SUBCASE("a model folder and a text file") {
        const fs::path model = tiny_gpt2("demo-model");
        write_text(scratch() / "demo.txt", some_text);
        const Result r = run_remat({"demo", model.string(), "--data", (scratch() / "demo.txt").string(), "--steps", "2",
                                    "--seq", "32"});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(lines_of(r.out)[1] == "model: " + model.string() + " (GPT-2, 2 layers, n_embd 32, 4 heads, vocabulary 256, 0.04M parameters)");
        CHECK(lines_of(r.out).back() == "max gradient difference: 0");
    }
    SUBCASE("--precision bf16: still bitwise equal") {
        const Result r = run_remat({"demo", "--steps", "3", "--batch", "2", "--seq", "64", "--precision", "bf16"});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.out.find(", bf16 products\n") != std::string::npos);
        CHECK(lines_of(r.out).back() == "max gradient difference: 0");
    }
    SUBCASE("bad input") {
        check_error({"demo", (scratch() / "nothing").string()}, (scratch() / "nothing").string() + ": no such file or folder");
        check_error({"demo", "--seq", "129"}, "--seq 129 is longer than the model's n_positions 128");
        check_error({"demo", "--batch", "0"}, "--batch must be a whole number from 1 to 1048576, got \"0\"");
    }
}

TEST_CASE("run --precision bf16: checkpointing changes no bit; the logits stay near fp32's") {
    const fs::path model = tiny_gpt2("bf16-run-model");
    IdTensor ids = IdTensor::from_shape({2, 16});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 37) % 256);
    const fs::path in = scratch() / "bf16-run-in.safetensors";
    write_ids(in, {{"input_ids", ids}});
    auto run = [&](const std::string& policy, const std::string& precision) {
        const fs::path out = scratch() / ("bf16-run-" + policy + "-" + precision + ".safetensors");
        const Result r = run_remat({"run", model.string(), "--input", in.string(), "--out", out.string(), "--grads",
                                    "--checkpoint", policy, "--precision", precision});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        return hf::SafetensorsFile::open(out);
    };
    const auto none = run("none", "bf16"), blocks = run("blocks", "bf16"), fp32 = run("none", "fp32");
    for (const hf::TensorInfo& t : none.tensors()) {
        if (t.name.starts_with("stats.")) continue;
        CAPTURE(t.name);
        CHECK(test::same_bits(none.read_float(t), blocks.read_float(*blocks.find(t.name))));
    }
    const double d = relative_difference(none.read_float(*none.find("logits")), fp32.read_float(*fp32.find("logits")));
    CHECK(d > 0);
    CHECK(d < 2e-2);
    check_error({"run", model.string(), "--input", in.string(), "--out", (scratch() / "x.safetensors").string(),
                 "--precision", "half"},
                "--precision: unknown precision 'half': expected fp32 or bf16");
}

TEST_CASE("each command's help") {
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
        {"init", {"--arch", "--n-layer", "--n-embd", "--n-head", "--vocab-size", "--n-positions", "--seed", "--force"}},
        {"train", {"--data", "--steps", "--batch", "--seq", "--checkpoint", "--lr", "--save", "--seed", "--clip"}},
        {"demo", {"--data", "--steps", "--batch", "--seq", "--seed", "max gradient difference: 0"}},
    };
    for (const auto& [name, flags] : commands) {
        const std::string& command = name;  // doctest's CAPTURE is a lambda: clang 14 cannot capture a structured binding
        CAPTURE(command);
        const Result r = run_remat({command, "--help"});
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        CHECK(r.out.find("Usage: remat " + command) != std::string::npos);
        for (const std::string& flag : flags) CHECK(r.out.find(flag) != std::string::npos);
    }
}

TEST_CASE("the help lists the architectures of the table") {
    const std::string gpt2 = "\n  gpt2  GPT2LMHeadModel (GPT-2, causal LM; also loads GPT2Model)\n";
    const std::string bert_mlm = "\n  bert  BertForMaskedLM (BERT, masked LM)\n";
    const std::string bert_base = "\n  bert  BertModel (BERT, no head)\n";
    const auto has = [](const Result& r, const std::string& text) { return r.out.find(text) != std::string::npos; };
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"info", "--help"}, {"run", "--help"}}) {
        CAPTURE(args[0]);
        const Result r = run_remat(args);
        CHECK(r.code == 0);
        CHECK(has(r, gpt2));
        CHECK(has(r, bert_mlm));
        CHECK(has(r, bert_base));
    }
    const Result demo = run_remat({"demo", "--help"});  // causal LMs only
    CHECK(has(demo, gpt2));
    CHECK(!has(demo, bert_mlm));
    const Result train = run_remat({"train", "--help"});  // every language-model head
    CHECK(has(train, gpt2));
    CHECK(has(train, bert_mlm));
    CHECK(!has(train, bert_base));
    const Result init = run_remat({"init", "--help"});  // what --arch takes: one class per model_type
    CHECK(has(init, gpt2));
    CHECK(has(init, bert_mlm));
    CHECK(!has(init, bert_base));
    CHECK(has(init, "--arch ARCH REQUIRED        The model_type: gpt2 (GPT2LMHeadModel), bert (BertForMaskedLM), "
                    "llama (LlamaForCausalLM), qwen2 (Qwen2ForCausalLM), mistral (MistralForCausalLM)"));
    CHECK(has(init, "n_layer (gpt2), num_hidden_layers (bert, llama, qwen2, mistral); default: 12 (gpt2), 12 (bert), 32 (llama)"));
    CHECK(has(init, "--rope-theta VALUE"));
    CHECK(has(init, "Sets num_key_value_heads (llama, qwen2, mistral)"));
}

TEST_CASE("plan: every policy predicted and measured, the plan for a budget") {
    const fs::path model = tiny_gpt2("plan/model");
    const Result r = run_remat({"plan", model.string(), "--batch", "2", "--seq", "32", "--budget", "1MB", "--rounds", "1"});
    CAPTURE(r.out);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() >= 14);
    CHECK(lines[0] == "model: " + model.string() + " (GPT2LMHeadModel, 35712 parameters), batch 2 x 32 tokens, training mode");
    CHECK(lines[1].rfind("profiled in ", 0) == 0);
    CHECK(lines[3].rfind("policy", 0) == 0);
    for (const char* policy : {"none", "blocks", "every:2", "every:3", "every:4", "sqrt", "selective", "plan"})
        CHECK(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
                  return l.rfind(std::string(policy) + " ", 0) == 0 && l.find("(does not fit)") == std::string::npos &&
                         l.rfind("plan for ", 0) != 0;
              }) == 1);
    CHECK(r.out.find("\nplan for budget:1MB: plan:") != std::string::npos);
    const Result none_fits = run_remat({"plan", model.string(), "--batch", "2", "--seq", "32", "--budget", "1KB", "--rounds", "1"});
    REQUIRE(none_fits.code == 0);
    CHECK(none_fits.out.find("\nno plan fits budget:1KB; the smallest budget that fits is ") != std::string::npos);
    check_error({"plan", model.string(), "--budget", "lots"},
                "--budget: memory size \"lots\": no number (expected a number and a unit: B, KB, MB, GB, TB or KiB, MiB, "
                "GiB, TiB, as in 11GB or 4.5GiB)");
}
