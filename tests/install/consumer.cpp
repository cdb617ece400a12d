// Built against the *installed* remat (headers and library found through pkg-config only).
// Differentiates a small least-squares loss through the tape, plainly and checkpointed, and compares
// with the closed-form gradient. Returns nonzero on any mismatch.
#include <cmath>
#include <cstdio>

#include <remat/remat.hpp>

using namespace remat;

int main() {
    // x (N, I), W (I, O) in_out layout, b (O,), y (N, O): loss = mean((x·W + b − y)²)
    const std::size_t N = 3, I = 2, O = 2;
    Tensor x = empty({N, I}), w = empty({I, O}), b = empty({O}), y = empty({N, O});
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t i = 0; i < I; ++i) x(n, i) = 0.5f * float(n) - 0.25f * float(i) + 0.1f;
    for (std::size_t i = 0; i < I; ++i)
        for (std::size_t o = 0; o < O; ++o) w(i, o) = 0.3f * float(i + 1) - 0.2f * float(o);
    for (std::size_t o = 0; o < O; ++o) b(o) = 0.05f * float(o + 1);
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t o = 0; o < O; ++o) y(n, o) = float(n + o) * 0.4f - 0.3f;

    // Closed form: r = x·W + b − y;  dL/dW = 2/(N·O) · xᵀ·r;  dL/db = 2/(N·O) · Σ_n r.
    Tensor r = empty({N, O});
    double loss = 0;
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t o = 0; o < O; ++o) {
            double v = b(o) - y(n, o);
            for (std::size_t i = 0; i < I; ++i) v += double(x(n, i)) * w(i, o);
            r(n, o) = float(v);
            loss += v * v / double(N * O);
        }
    const double c = 2.0 / double(N * O);

    int failures = 0;
    auto expect = [&](const char* what, double got, double want) {
        if (std::abs(got - want) > 1e-5 * (1 + std::abs(want))) {
            std::printf("MISMATCH %s: got %.8g, want %.8g\n", what, got, want);
            ++failures;
        }
    };

    Tensor* wrt[] = {&w, &b};
    for (bool checkpoint : {false, true}) {
        auto model = [&w, &b](const std::vector<Var>& in) {
            return ops::linear(in[0], ad::leaf(w), ad::leaf(b), ops::WeightLayout::in_out);
        };
        auto result = ad::gradient(
            [&] {
                Var input(x);
                Var prediction = checkpoint ? ad::checkpointed(model, {input}) : model({input});
                return ops::mse(prediction, Var(y));
            },
            wrt);
        expect("loss", result.loss, loss);
        for (std::size_t i = 0; i < I; ++i)
            for (std::size_t o = 0; o < O; ++o) {
                double g = 0;
                for (std::size_t n = 0; n < N; ++n) g += c * x(n, i) * r(n, o);
                expect("dL/dW", result.grads[0](i, o), g);
            }
        for (std::size_t o = 0; o < O; ++o) {
            double g = 0;
            for (std::size_t n = 0; n < N; ++n) g += c * r(n, o);
            expect("dL/db", result.grads[1](o), g);
        }
    }
    std::printf("installed remat (%s backend): %s\n", std::string(ad::current().name()).c_str(),
                failures ? "FAILED" : "gradients match the closed form");
    return failures ? 1 : 0;
}
