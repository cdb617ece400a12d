// A LoRA training step (forward + backward of the LM loss) of a Llama, or the full fine-tuning step of
// the same model, driven from stdin one command per line, so that bench/lora_compare.py can interleave
// it with bench/torch_llama.py --lora (PyTorch, a hand-written LoRA) and compare them in one run.
//
//   build/bench/lora_step tinyllama|tinylora [--lora R | --full | --frozen] [--precision bf16]
//                         [--base-precision bf16] [--checkpoint none|blocks|auto|…] [--layers N]
//
// --lora R: adapters of rank R, alpha 2R, dropout 0.05 on q, k, v, o, gate, up and down projections, B
// drawn N(0, 0.01²) (with B zero A would get no gradient), everything else frozen — as torch_llama.py
// --lora R --lora-random-b. --full: every parameter trained. The model is in training mode (LoRA's
// dropout on; the Llama has none of its own). --frozen: only the input embedding trained, so the
// step is the frozen products' forward and input gradients alone — the floor a LoRA step adds its
// adapters to. --layers N: the config's width with N decoder layers (quicker A/B checks).
//
// Commands (one reply line each, flushed):
//   params        → "<parameters> <matmul parameters>"  (matmul: all but the input embedding)
//   trainable     → "<trained parameters>"
//   step          → "<ms> <peak activation bytes>"      zero_grad (untimed), then one timed step
//   rss           → "<peak resident bytes>"             the process's, so far (getrusage)
//   quit
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "models/architecture.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/layers/init.hpp"
#include "remat/ops/precision.hpp"
#include "remat/planning/memory_limit.hpp"
#include "remat/planning/plan.hpp"

using namespace remat;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape3 {
    const char* name;
    models::SizeRequest sizes;
    std::size_t T, B;
};
const Shape3 configs[] = {
    // TinyLlama-1.1B's shape, its untied head.
    {"tinyllama",
     {.n_layer = 22, .n_embd = 2048, .n_head = 32, .vocab_size = 32000, .n_positions = 2048,
      .fields = {{"num_key_value_heads", "4"}, {"intermediate_size", "5632"}, {"tie_word_embeddings", "false"},
                 {"rope_theta", "10000.0"}, {"rms_norm_eps", "1e-05"}}},
     512, 1},
    // A small one to try the server on.
    {"tinylora",
     {.n_layer = 2, .n_embd = 64, .n_head = 4, .vocab_size = 256, .n_positions = 64,
      .fields = {{"num_key_value_heads", "2"}, {"intermediate_size", "128"}, {"tie_word_embeddings", "false"}}},
     16, 2},
};

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::size_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::size_t>(usage.ru_maxrss) * 1024;
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: lora_step tinyllama|tinylora [--lora R | --full | --frozen] [--precision bf16] [--base-precision bf16] "
                 "[--checkpoint POLICY] [--layers N]   (then commands on stdin)\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    const Shape3* config = nullptr;
    if (argc >= 2)
        for (const Shape3& c : configs)
            if (argv[1] == std::string(c.name)) config = &c;
    if (!config) usage();
    std::size_t rank = 0;
    bool frozen = false;
    Precision precision = Precision::fp32, base_precision = Precision::fp32;
    std::string checkpoint = "blocks";
    models::SizeRequest sizes = config->sizes;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--lora" && has_value) rank = std::stoul(argv[++i]);
        else if (a == "--full") rank = 0;
        else if (a == "--frozen") frozen = true;
        else if (a == "--precision" && has_value) precision = parse_precision(argv[++i]);
        else if (a == "--base-precision" && has_value) base_precision = parse_precision(argv[++i]);
        else if (a == "--checkpoint" && has_value) checkpoint = argv[++i];
        else if (a == "--layers" && has_value) sizes.n_layer = std::stoul(argv[++i]);
        else usage();
    }

    const models::Architecture& arch = *models::find_class("LlamaForCausalLM");
    Generator init(1);
    const Policy requested = Policy::parse(checkpoint);
    auto model = arch.create(arch.config_with(sizes), init, nullptr,
                             requested.needs_planning() ? Policy::blocks() : requested);
    if (rank > 0) {
        Generator lora_init(2);
        model->set_lora({.r = rank, .alpha = 2.0f * static_cast<float>(rank), .dropout = 0.05f,
                         .target_modules = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}},
                        lora_init);
        Generator b_init(5);
        for (const auto& [path, p] : model->named_parameters())
            if (path.ends_with("lora_B.weight")) p->value = init::normal(p->shape(), 0.01f, b_init);
        if (base_precision == Precision::bf16) model->hold_base_in_bf16();
    }
    if (frozen)
        for (const auto& [path, p] : model->named_parameters()) p->frozen = !path.ends_with("embed_tokens.weight");
    model->set_training(true);

    IdTensor ids = IdTensor::from_shape({config->B, config->T});
    Generator token_rng(7);
    std::vector<std::uint32_t> bits(ids.size());
    token_rng.fill_bits(bits.data(), bits.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = bits[i] % *sizes.vocab_size;
    const data::Batch batch{.ids = {{"input_ids", ids}, {"labels", ids}}};

    const Autocast autocast(precision);
    ad::Tape& tape = ad::default_tape();
    auto step = [&] { tape.backward(model->training_loss(batch)); };
    step();  // allocates every gradient buffer, so steps measure activations only
    if (requested.needs_planning()) {
        const planning::Profile profile = model->profile_checkpointing([&] { return model->training_loss(batch); });
        const std::size_t budget = requested.kind == Policy::Kind::budget
                                       ? requested.budget_bytes
                                       : planning::activation_budget(planning::memory_limit(), 0);
        const auto plan = planning::plan_checkpointing(profile, budget);
        if (!plan) {
            std::fprintf(stderr, "%s: no plan fits\n", checkpoint.c_str());
            return 2;
        }
        model->set_policy(*plan);
        std::fprintf(stderr, "%s: %s\n", checkpoint.c_str(), plan->to_string().c_str());
    }

    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "quit") break;
        if (cmd == "params") {
            std::size_t all = 0, embedding = 0;
            for (const auto& [path, p] : model->named_parameters()) {
                all += p->size();
                if (path.ends_with("embed_tokens.weight")) embedding += p->size();
            }
            std::printf("%zu %zu\n", all, all - embedding);
        } else if (cmd == "trainable") {
            std::size_t trained = 0;
            for (Param* p : model->parameters()) trained += p->frozen ? 0 : p->size();
            std::printf("%zu\n", trained);
        } else if (cmd == "step") {
            tape.zero_grad();
            memory::PeakScope scope;
            const auto t0 = Clock::now();
            step();
            const double ms = ms_since(t0);
            std::printf("%.3f %zu\n", ms, scope.peak_above_baseline());
        } else if (cmd == "rss") {
            std::printf("%zu\n", peak_rss_bytes());
        } else {
            std::printf("error: unknown command '%s'\n", line.c_str());
        }
        std::fflush(stdout);
    }
    return 0;
}
