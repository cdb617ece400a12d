// Whole data-parallel training steps with and without ZeRO-1 (--shard-optimizer), alternating
// within one run so that both see the same machine; for docs/distributed.md's table, never a test:
//
//   mpirun --allow-run-as-root -np 2 build/bench/zero_step small|deep [ROUNDS]
//
// Two copies of the model, each under its own train::Trainer over the same random windows: one
// plain (every rank receives every gradient sum and updates every parameter), one sharded (each
// rank receives its share's sums, updates it and sends it to the others). Every round runs one step
// of each — forward, backward with the sum during it, clipping, AdamW and, sharded, the parameters'
// gather — and each step's time is the trainer's own (RunSummary::seconds). Prints medians over
// ROUNDS (default 8; the first left out), the ratio, the optimiser state per rank, and checks that
// both copies computed the same bits.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "models/architecture.hpp"
#include "remat/data/dataset.hpp"
#include "remat/dist/world.hpp"
#include "remat/train/trainer.hpp"

using namespace remat;

namespace {

double median(std::vector<double> v) {
    if (v.size() > 1) v.erase(v.begin());  // the first round warms up
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Windows of random token ids, the same for every index on every rank.
class RandomWindows final : public data::Dataset {
public:
    RandomWindows(std::size_t seq, std::size_t vocab) : seq_(seq), vocab_(vocab) {}
    std::uint64_t size() const override { return 1 << 20; }
    std::size_t tokens_per_example() const override { return seq_; }
    data::Batch batch(std::span<const std::uint64_t> indices, const data::MaskingKey&) const override {
        IdTensor ids = IdTensor::from_shape({indices.size(), seq_});
        for (std::size_t b = 0; b < indices.size(); ++b) {
            Generator g(indices[b]);
            std::vector<std::uint32_t> bits(seq_);
            g.fill_bits(bits.data(), bits.size());
            for (std::size_t t = 0; t < seq_; ++t) ids.data()[b * seq_ + t] = static_cast<std::int64_t>(bits[t] % vocab_);
        }
        return {.ids = {{"input_ids", ids}, {"labels", ids}}};
    }
    std::string name() const override { return "random windows"; }

private:
    std::size_t seq_, vocab_;
};

}  // namespace

int main(int argc, char** argv) {
    dist::World world;
    const std::string name = argc > 1 ? argv[1] : "small";
    const int rounds = argc > 2 ? std::stoi(argv[2]) : 8;
    const bool deep = name == "deep";
    const std::size_t T = deep ? 256 : 128, B = deep ? 4 : 2, V = deep ? 8192 : 50257;
    const models::Architecture& arch = *models::find_class("GPT2LMHeadModel");
    const models::SizeRequest sizes{.n_layer = deep ? 24 : 12, .n_embd = deep ? 256 : 768, .n_head = deep ? 8 : 12, .vocab_size = V,
                                    .n_positions = 1024,
                                    .fields = {{"resid_pdrop", "0.0"}, {"embd_pdrop", "0.0"}, {"attn_pdrop", "0.0"}}};
    const RandomWindows data(T, V);

    struct Run {
        std::unique_ptr<models::Model> model;
        std::unique_ptr<train::Trainer> trainer;
        std::vector<double> ms, communication_ms;
        bool stepped = false;
    };
    Run runs[2];  // plain, sharded
    for (int sharded = 0; sharded < 2; ++sharded) {
        Generator init(1);
        Run& run = runs[sharded];
        run.model = arch.create(arch.config_with(sizes), init, nullptr, Policy::none());
        run.trainer = std::make_unique<train::Trainer>(
            *run.model, data,
            train::TrainerOptions{.steps = rounds,
                                  .batch = B,
                                  .adamw = {.lr = 1e-4f, .weight_decay = 0.01f},
                                  .world = &world,
                                  .shard_optimizer = sharded == 1,
                                  .on_step = [&run](const train::StepReport& r) {
                                      run.stepped = true;
                                      run.ms.push_back(r.seconds * 1e3);
                                      run.communication_ms.push_back(r.communication_seconds.value_or(0) * 1e3);
                                  },
                                  .stop_requested = [&run] { return run.stepped ? SIGINT : 0; }});  // one step per run()
    }
    for (int r = 0; r < rounds; ++r)
        for (Run& run : runs) {
            run.stepped = false;
            world.barrier();
            run.trainer->run();
        }

    bool same = true;  // both copies' weights, bit for bit
    const std::vector<Param*> a = runs[0].model->parameters(), b = runs[1].model->parameters();
    for (std::size_t i = 0; i < a.size(); ++i)
        same = same && std::memcmp(a[i]->value.data(), b[i]->value.data(), a[i]->value.size() * sizeof(float)) == 0;
    const train::RunSummary done = runs[1].trainer->run();  // no step left: its summary's optimiser bytes
    if (!world.is_root()) return 0;
    std::size_t unsharded = 0, most = 0;
    for (std::size_t bytes : done.optimiser_bytes) {
        unsharded += bytes;
        most = std::max(most, bytes);
    }
    const double plain = median(runs[0].ms), sharded = median(runs[1].ms);
    std::printf("%s: %zu ranks: plain %.0f ms/step (communication %.1f ms), ZeRO-1 %.0f ms/step (communication and gather %.1f ms): "
                "%.3fx; optimiser state per rank at most %.1f MiB of %.1f MiB (%.2fx); the same weights: %s (median of %d)\n",
                name.c_str(), world.size(), plain, median(runs[0].communication_ms), sharded, median(runs[1].communication_ms),
                sharded / plain, static_cast<double>(most) / (1 << 20), static_cast<double>(unsharded) / (1 << 20),
                static_cast<double>(most) / static_cast<double>(unsharded), same ? "yes" : "NO", rounds - 1);
    return same ? 0 : 1;
}
