// LoRA adapters through the commands (docs/lora.md): `remat run --adapter` (its gradients by PEFT's
// names, none of the frozen base), `remat merge` (the merged model computes what base + adapter
// computes), `remat generate --adapter`, and the errors of an adapter that does not fit.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "remat/hf/safetensors.hpp"
#include "tests/cli/run_remat.hpp"

using namespace cli_test;
using namespace remat;

namespace {

// A byte-level Llama of 2 layers and an adapter trained on it (B no longer zero, so it changes the output).
struct Adapted {
    fs::path base, adapter, input;
};
const Adapted& adapted() {
    static const Adapted made = [] {
        const fs::path base = scratch() / "lora-base", adapter = scratch() / "lora-adapter", text = scratch() / "lora.txt";
        REQUIRE(run_remat({"init", base.string(), "--arch", "llama", "--n-layer", "2", "--n-embd", "32", "--n-head", "4",
                           "--vocab-size", "256", "--n-positions", "64", "--seed", "5"}).code == 0);
        std::string t;
        for (int i = 0; i < 30; ++i) t += "Line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog.\n";
        write_text(text, t);
        const Result r = run_remat({"train", base.string(), "--data", text.string(), "--steps", "6", "--batch", "2", "--seq",
                                    "32", "--lr", "2e-2", "--lora", "r=4,alpha=16,targets=q_proj,v_proj,down_proj", "--save",
                                    adapter.string()});
        CAPTURE(r.err);
        REQUIRE(r.code == 0);
        IdTensor ids = IdTensor::from_shape({2, 12});
        for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>(97 + i % 26);
        write_ids(scratch() / "lora-in.safetensors", {{"input_ids", ids}});
        return Adapted{base, adapter, scratch() / "lora-in.safetensors"};
    }();
    return made;
}

hf::SafetensorsFile run_out(const std::vector<std::string>& extra, const std::string& name) {
    const fs::path out = scratch() / (name + ".safetensors");
    std::vector<std::string> args{"run", "--input", adapted().input.string(), "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = run_remat(args);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    return hf::SafetensorsFile::open(out);
}

double largest_difference(const Tensor& a, const Tensor& b) {
    REQUIRE(a.size() == b.size());
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, static_cast<double>(std::abs(a.data()[i] - b.data()[i])));
    return d;
}

}  // namespace

TEST_CASE("remat run --adapter --grads: the adapter's gradients by PEFT's names, none of the frozen base") {
    const auto f = run_out({adapted().base.string(), "--adapter", adapted().adapter.string(), "--grads"}, "lora-grads");
    std::vector<std::string> grads;
    for (const hf::TensorInfo& t : f.tensors())
        if (t.name.starts_with("grad.")) grads.push_back(t.name);
    std::vector<std::string> expected;
    for (const char* layer : {"0", "1"})
        for (const char* module : {"self_attn.q_proj", "self_attn.v_proj", "mlp.down_proj"})
            for (const char* matrix : {"lora_A", "lora_B"})
                expected.push_back(std::string("grad.base_model.model.model.layers.") + layer + "." + module + "." + matrix + ".weight");
    std::sort(grads.begin(), grads.end());
    std::sort(expected.begin(), expected.end());
    CHECK(grads == expected);
    CHECK(f.find("grad.base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight")->shape == std::vector<std::size_t>{4, 32});
    CHECK(f.find("grad.base_model.model.model.layers.1.mlp.down_proj.lora_B.weight")->shape == std::vector<std::size_t>{32, 4});
}

TEST_CASE("remat merge: the merged model computes what the base with the adapter computes; generate agrees") {
    const fs::path merged = scratch() / "lora-merged";
    const Result r = run_remat({"merge", adapted().base.string(), adapted().adapter.string(), merged.string()});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out == "merged 6 adapted layers of " + adapted().adapter.string() + " (r 4, scale 4) into " + merged.string() +
                       ": config.json, model.safetensors\n");
    CHECK(read_text(merged / "config.json") == read_text(adapted().base / "config.json"));

    const auto with_adapter = run_out({adapted().base.string(), "--adapter", adapted().adapter.string()}, "lora-with");
    const auto from_merged = run_out({merged.string()}, "lora-merged-run");
    const auto base = run_out({adapted().base.string()}, "lora-base-run");
    const Tensor logits = with_adapter.read_float(*with_adapter.find("logits"));
    const double merge_error = largest_difference(logits, from_merged.read_float(*from_merged.find("logits")));
    const double adapter_effect = largest_difference(logits, base.read_float(*base.find("logits")));
    MESSAGE("merged vs adapted logits: " << merge_error << "; the adapter's own effect: " << adapter_effect);
    CHECK(merge_error < 1e-5);
    CHECK(adapter_effect > 1e-3);

    auto ids_of_generation = [](const std::vector<std::string>& model) {
        std::vector<std::string> args{"generate"};
        args.insert(args.end(), model.begin(), model.end());
        args.insert(args.end(), {"--prompt", "Line 3: the quick", "--max-new-tokens", "12", "--json"});
        const Result g = run_remat(args);
        CAPTURE(g.err);
        REQUIRE(g.code == 0);
        return nlohmann::json::parse(g.out)["ids"];
    };
    CHECK(ids_of_generation({adapted().base.string(), "--adapter", adapted().adapter.string()}) ==
          ids_of_generation({merged.string()}));
}

TEST_CASE("an adapter that does not fit the model, or no adapter at all, is one error line") {
    const std::string base = adapted().base.string(), in = adapted().input.string(), out = (scratch() / "o.safetensors").string();
    check_error({"run", base, "--adapter", (scratch() / "nowhere").string(), "-i", in, "-o", out},
                (scratch() / "nowhere").string() + ": --adapter: no such folder");
    // The same family, wider: every adapter matrix has another shape.
    const fs::path wide = scratch() / "lora-wide";
    REQUIRE(run_remat({"init", wide.string(), "--arch", "llama", "--n-layer", "2", "--n-embd", "48", "--n-head", "4",
                       "--vocab-size", "256", "--n-positions", "64"}).code == 0);
    const Result r = run_remat({"merge", wide.string(), adapted().adapter.string(), (scratch() / "never").string()});
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with("error: " + (adapted().adapter / "adapter_model.safetensors").string()));
    CHECK(r.err.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(scratch() / "never"));
}
