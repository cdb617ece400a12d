#include <doctest/doctest.h>

#include <cstring>
#include <thread>

#include "remat/layers.hpp"
#include "remat/ops.hpp"
#include "remat/train/gradient.hpp"
#include "tests/support/temp_dir.hpp"

using namespace remat;

namespace {
auto dropout_model() {
    Generator rng(1);
    return nn::chain_from(rng, [](Generator& g) { return nn::Linear::create(8, 32, g); }, nn::Dropout::create(0.5f),
                          nn::gelu_tanh, [](Generator& g) { return nn::MultiHeadAttention::create(32, 4, g, true, 0.25f); });
}
using DropoutModel = decltype(dropout_model());

struct Run {
    float loss;
    std::vector<Tensor> grads;
};
Run run(DropoutModel& m, const Tensor& x) {
    Run r{};
    for (int step = 0; step < 3; ++step) {
        auto [loss, grads] = train::withgradient([&](auto& mm) { return ops::mean(mm(Var(x))); }, m);
        r.loss = loss;
        for (Param* p : tree::parameters(grads)) r.grads.push_back(p->value);
    }
    return r;
}
bool same(const Run& a, const Run& b) {
    if (std::memcmp(&a.loss, &b.loss, sizeof(float)) != 0 || a.grads.size() != b.grads.size()) return false;
    for (std::size_t i = 0; i < a.grads.size(); ++i)
        if (!test::same_bits(a.grads[i], b.grads[i])) return false;
    return true;
}
}  // namespace

TEST_CASE("a model per thread, each with its own generator, runs as if the runs were sequential") {
    auto model = dropout_model();
    nn::trainmode(model);
    Tensor x = empty(Shape{2, 5, 8});
    Generator(9).fill_normal(x.data(), x.size());

    SUBCASE("set_rng reaches every Dropout, attention's included") {
        auto gen = std::make_shared<Generator>(3);
        CHECK(nn::set_rng(model, gen) == 2);
        CHECK(std::get<1>(model.layers).rng == gen);
        CHECK(std::get<3>(model.layers).dropout.rng == gen);
        CHECK_THROWS_AS(nn::set_rng(model, nullptr), ValueError);
    }
    SUBCASE("two threads") {
        const Generator root(2024);
        auto copy0 = model, copy1 = model;  // copies share the generator: give each its own
        nn::set_rng(copy0, std::make_shared<Generator>(root.fork(0)));
        nn::set_rng(copy1, std::make_shared<Generator>(root.fork(1)));
        Run threaded0, threaded1;
        std::thread t0([&] { threaded0 = run(copy0, x); });
        std::thread t1([&] { threaded1 = run(copy1, x); });
        t0.join();
        t1.join();

        nn::set_rng(copy0, std::make_shared<Generator>(root.fork(0)));
        nn::set_rng(copy1, std::make_shared<Generator>(root.fork(1)));
        const Run sequential0 = run(copy0, x), sequential1 = run(copy1, x);
        CHECK(same(threaded0, sequential0));
        CHECK(same(threaded1, sequential1));
        CHECK_FALSE(same(sequential0, sequential1));  // the two streams differ: dropout is live
    }
}
