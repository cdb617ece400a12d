// Greedy decoding speed of remat's generate() at batch 1: the other side of bench/torch_generate.py.
//
//   build/bench/generate [gpt2-small] [smollm] [--prompt 64] [--new 128] [--repeats 5] [--seed 1]
//
// Prints one JSON line per model, with torch_generate.py's keys:
//   {"model", "threads", "batch": 1, "prompt_tokens", "new_tokens", "decode_steps", "repeats", "prefill_ms",
//    "decode_ms", "decode_tokens_per_s", "weight_bytes", "kv_cache_bytes"}
// The models are those of bench/model_step (GPT-2 small; a Llama of SmolLM-135M's shape, rope_theta 1e4 as
// torch_generate.py), random weights from --seed, float32. prefill: the prompt's forward that fills the cache,
// the head on its last position and the first token; decode: every later token, one forward each
// (decode_tokens_per_s = decode_steps / decode time). Medians over --repeats runs after a warm-up run.
// weight_bytes: float32 parameters (the tied matrix once), what every decode step reads.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/configs.hpp"
#include "remat/generation/generate.hpp"
#include "remat/ops/threads.hpp"
#include "remat/tree/parameters.hpp"

using namespace remat;

namespace {

struct Flags {
    std::size_t prompt = 64, new_tokens = 128, repeats = 5;
    std::uint64_t seed = 1;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class Model>
void measure(const char* name, Model model, const Flags& f) {
    Generator ids(f.seed + 1);
    std::vector<std::int64_t> prompt(f.prompt);
    for (auto& id : prompt) {
        std::uint32_t bits;
        ids.fill_bits(&bits, 1);
        id = bits % 1000;
    }
    generation::Options o;
    o.max_new_tokens = f.new_tokens;
    (void)generation::generate(model, {prompt}, o);  // warm-up: page faults, the block cache
    std::vector<double> prefill, decode, rate;
    generation::Result r;
    for (std::size_t i = 0; i < f.repeats; ++i) {
        r = generation::generate(model, {prompt}, o);
        prefill.push_back(r.prefill_seconds * 1e3);
        decode.push_back(r.decode_seconds * 1e3);
        rate.push_back(static_cast<double>(r.decode_steps) / r.decode_seconds);
    }
    std::printf("{\"model\": \"%s\", \"threads\": %zu, \"batch\": 1, \"prompt_tokens\": %zu, \"new_tokens\": %zu, \"decode_steps\": %zu, "
                "\"repeats\": %zu, \"prefill_ms\": %.2f, \"decode_ms\": %.2f, \"decode_tokens_per_s\": %.3f, \"weight_bytes\": %zu, "
                "\"kv_cache_bytes\": %zu}\n",
                name, ops::num_threads(), f.prompt, f.new_tokens, r.decode_steps, f.repeats, median(prefill), median(decode), median(rate),
                tree::count_parameters(model) * sizeof(float), r.cache_bytes);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    Flags f;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&] { return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 0ull; };
        if (a == "--prompt") f.prompt = value();
        else if (a == "--new") f.new_tokens = value();
        else if (a == "--repeats") f.repeats = value();
        else if (a == "--seed") f.seed = value();
        else if (a == "gpt2-small" || a == "smollm") models.push_back(a);
        else {
            std::fprintf(stderr, "usage: generate [gpt2-small] [smollm] [--prompt N] [--new N] [--repeats N] [--seed S]\n");
            return 2;
        }
    }
    if (models.empty()) models = {"gpt2-small", "smollm"};
    if (f.prompt == 0 || f.new_tokens == 0 || f.repeats == 0) {
        std::fprintf(stderr, "generate: --prompt, --new and --repeats must be at least 1\n");
        return 2;
    }
    for (const std::string& m : models) {
        Generator init(f.seed);
        if (m == "gpt2-small")
            measure("gpt2-small", gpt2::create(bench::gpt2_config(12, 768, 12, 50257, 1024), init), f);
        else
            measure("smollm", llama::create(bench::smollm_settings(10000), init), f);
    }
}
