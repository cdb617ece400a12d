// A user's program in the style of the docs, built against the *installed* remat (pkg-config only)
// and run under ASan in the sanitizer CI run: a custom block, a plain-struct model of them, checkpointing,
// training with AdamW, evaluation passes without no-grad, and the model moved into a container
// between forward and backward; plus a GPT-2 from the installed model headers. Returns nonzero on
// any broken promise.
#include <cstdio>
#include <cstring>
#include <vector>

#include <models/gpt2/gpt2.hpp>
#include <remat/remat.hpp>

using namespace remat;

namespace {

int failures = 0;
void expect(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAILED: %s\n", what);
        ++failures;
    }
}

// x + drop(fc2(gelu(fc1(norm(x))))): a block set_checkpointing wraps.
struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::LayerNorm, norm), (nn::Linear, fc1), (nn::Linear, fc2), (nn::Dropout, drop));
    static constexpr const char* name = "Block";
    static constexpr bool is_block = true;

    static Block create(std::size_t width, Generator& rng, std::shared_ptr<Generator> dropout) {
        auto fc1 = nn::Linear::create(width, 4 * width, rng);  // one statement each: a defined draw order
        auto fc2 = nn::Linear::create(4 * width, width, rng);
        return {nn::LayerNorm::create(width), std::move(fc1), std::move(fc2), nn::Dropout::create(0.1f, std::move(dropout))};
    }
    Var operator()(const Var& x) const {
        Var h = nn::call("fc1", fc1, nn::call("norm", norm, x));
        return x + drop(nn::call("fc2", fc2, ops::gelu_tanh(h)));
    }
};

// A plain struct of layers: REMAT_MODEL makes it a model set_checkpointing can rewrite.
REMAT_MODEL(Net, (nn::Linear, embed), (std::vector<Block>, blocks), (nn::Linear, head))
    static constexpr const char* name = "Net";
    Var operator()(const Var& x) { return nn::call("head", head, run_blocks(blocks, "blocks", nn::call("embed", embed, x))); }
};

Net make_net(std::uint64_t seed) {
    Generator rng(seed);
    auto dropout = std::make_shared<Generator>(seed + 1);  // this model's own dropout generator
    auto embed = nn::Linear::create(3, 8, rng);
    std::vector<Block> blocks;
    for (int i = 0; i < 4; ++i) blocks.push_back(Block::create(8, rng, dropout));
    auto head = nn::Linear::create(8, 1, rng);
    return Net{std::move(embed), std::move(blocks), std::move(head)};
}

bool same_bits(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Loss of one step, and each parameter's gradient; the model is moved into a vector (which then
// reallocates) between forward and backward.
template <class Model>
std::pair<float, std::vector<Tensor>> step_moving_the_model(Model model, const Var& x, const Var& y) {
    ad::Tape tape;
    ad::UseBackend use(tape);
    Var loss = ops::mse(model(x), y);
    std::vector<Model> shelf;
    shelf.push_back(std::move(model));
    for (int i = 0; i < 5; ++i) shelf.push_back(shelf.front());  // reallocates: shelf[0] moves again
    tape.backward(loss);
    std::vector<Tensor> grads;
    for (Param* p : tree::parameters(shelf[0])) grads.push_back(*tape.grad(p->value));
    return {loss.value().data()[0], std::move(grads)};
}

}  // namespace

int main() {
    Tensor xs = empty({16, 3}), ys = empty({16, 1});
    Generator data(42);
    data.fill_normal(xs.data(), xs.size());
    for (std::size_t n = 0; n < 16; ++n) ys(n, 0) = xs(n, 0) * xs(n, 1) - 0.5f * xs(n, 2);
    const Var x(xs), y(ys);

    // Checkpointing changes no bit, even with the model moved mid-step.
    auto plain = make_net(1);
    auto checkpointed = set_checkpointing(make_net(1), Policy::parse("sqrt"));
    nn::trainmode(plain);
    nn::trainmode(checkpointed);
    const auto [plain_loss, plain_grads] = step_moving_the_model(std::move(plain), x, y);
    const auto [ck_loss, ck_grads] = step_moving_the_model(std::move(checkpointed), x, y);
    expect(plain_loss == ck_loss, "checkpointed loss equals the plain loss");
    expect(plain_grads.size() == ck_grads.size(), "as many gradients");
    for (std::size_t i = 0; i < plain_grads.size(); ++i) expect(same_bits(plain_grads[i], ck_grads[i]), "bitwise gradients");

    // Training with AdamW, then evaluation passes without no-grad: their graphs are freed.
    auto model = set_checkpointing(make_net(2), Policy::blocks());
    nn::trainmode(model);
    auto state = train::setup(train::AdamW{.lr = 1e-2f}, model);
    float first = 0, last = 0;
    for (int step = 0; step < 30; ++step) {
        auto [loss, grads] = train::withgradient([&](auto& m) { return ops::mse(m(x), y); }, model);
        train::update(state, model, grads);
        (step == 0 ? first : last) = loss;
    }
    expect(last < first, "training lowers the loss");
    nn::testmode(model);
    ad::Tape& tape = ad::default_tape();
    const std::size_t baseline = memory::live_bytes(), nodes = tape.live_node_count();
    for (int i = 0; i < 50; ++i) (void)model(x);
    expect(tape.live_node_count() == nodes, "evaluation graphs are freed");
    expect(memory::live_bytes() <= baseline, "evaluation keeps no memory");

    // A GPT-2 from the installed model headers, checkpointed.
    gpt2::Config c;
    c.vocab_size = 32;
    c.n_positions = 8;
    c.n_embd = 16;
    c.n_layer = 2;
    c.n_head = 2;
    Generator init(3);
    auto lm = set_checkpointing(gpt2::create(c, init), Policy::blocks());
    IdTensor ids = IdTensor::from_shape({2, 8});
    for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>(i % 32);
    auto [lm_loss, lm_grads] = train::withgradient([&](auto& m) { return m.loss(m(ids), ids); }, lm);
    expect(lm_loss > 3.0f && lm_loss < 4.0f, "an untrained GPT-2 starts near ln(32)");

    std::printf("installed remat, a user's program: %s (loss %.4f -> %.4f)\n", failures ? "FAILED" : "ok",
                static_cast<double>(first), static_cast<double>(last));
    return failures ? 1 : 0;
}
