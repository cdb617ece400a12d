// Forward values of every op against references computed independently with PyTorch in float64
// (tests/fixtures/ops.json, made by tests/fixtures/make_op_fixtures.py; torch is not needed here).
// Each case prints its largest absolute difference and its largest relative difference (over
// references above the case's absolute tolerance), llm.c style.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "remat/remat.hpp"

using namespace remat;
using json = nlohmann::json;

namespace {

const json& fixtures() {
    static const json j = [] {
        const std::string path = std::string(REMAT_FIXTURES) + "/ops.json";
        std::ifstream in(path);
        REQUIRE_MESSAGE(in.good(), "cannot open ", path);
        return json::parse(in);
    }();
    return j;
}

// An input: inline {"shape", "data"}, or the key of a tensor stored once under "shared".
const json& resolve(const json& t) { return t.is_string() ? fixtures().at("shared").at(t.get<std::string>()) : t; }

Shape shape_of(const json& t) { return resolve(t).at("shape").get<std::vector<std::size_t>>(); }

Tensor to_tensor(const json& j) {
    const json& t = resolve(j);
    Tensor out = empty(shape_of(t));
    const json& data = t.at("data");
    REQUIRE(data.size() == out.size());
    for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] = static_cast<float>(data[i].get<double>());
    return out;
}

IdTensor to_ids(const json& j) {
    const json& t = resolve(j);
    IdTensor out = IdTensor::from_shape(shape_of(t));
    const json& data = t.at("data");
    REQUIRE(data.size() == out.size());
    for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] = data[i].get<std::int64_t>();
    return out;
}

Var input(const json& c, const char* name) { return Var(to_tensor(c.at("inputs").at(name))); }

// Runs one case's op in remat; split_last gives several outputs, everything else one.
std::vector<Tensor> run(const json& c) {
    ad::NoGrad no_grad;
    const std::string op = c.at("op");
    const json& p = c.at("params");
    const json& in = c.at("inputs");
    auto one = [](const Var& v) { return std::vector<Tensor>{v.value()}; };
    if (op == "matmul")
        return one(ops::matmul(input(c, "a"), input(c, "b"), p.at("transpose_a"), p.at("transpose_b")));
    if (op == "linear") {
        const Var bias = in.contains("bias") ? input(c, "bias") : Var();
        const auto layout = p.at("layout") == "in_out" ? ops::WeightLayout::in_out : ops::WeightLayout::out_in;
        return one(ops::linear(input(c, "x"), input(c, "weight"), bias, layout));
    }
    if (op == "add") return one(ops::add(input(c, "a"), input(c, "b")));
    if (op == "sub") return one(ops::sub(input(c, "a"), input(c, "b")));
    if (op == "mul") return one(ops::mul(input(c, "a"), input(c, "b")));
    if (op == "scale") return one(ops::scale(input(c, "x"), p.at("factor").get<float>()));
    if (op == "gelu_tanh") return one(ops::gelu_tanh(input(c, "x")));
    if (op == "gelu_erf") return one(ops::gelu_erf(input(c, "x")));
    if (op == "relu") return one(ops::relu(input(c, "x")));
    if (op == "tanh") return one(ops::tanh(input(c, "x")));
    if (op == "sigmoid") return one(ops::sigmoid(input(c, "x")));
    if (op == "silu") return one(ops::silu(input(c, "x")));
    if (op == "silu_mul") return one(ops::silu_mul(input(c, "gate"), input(c, "up")));
    if (op == "rms_norm") return one(ops::rms_norm(input(c, "x"), input(c, "weight"), p.at("eps").get<float>()));
    if (op == "rotary") return one(ops::rotary(input(c, "x"), to_tensor(in.at("cos")), to_tensor(in.at("sin"))));
    if (op == "exp") return one(ops::exp(input(c, "x")));
    if (op == "log") return one(ops::log(input(c, "x")));
    if (op == "sqrt") return one(ops::sqrt(input(c, "x")));
    if (op == "clamp") {  // null: that side is open
        auto bound = [&](const char* key, float open) { return p.at(key).is_null() ? open : p.at(key).get<float>(); };
        return one(ops::clamp(input(c, "x"), bound("lo", -INFINITY), bound("hi", INFINITY)));
    }
    if (op == "div") return one(ops::div(input(c, "a"), input(c, "b")));
    if (op == "maximum") return one(ops::maximum(input(c, "a"), input(c, "b")));
    if (op == "minimum") return one(ops::minimum(input(c, "a"), input(c, "b")));
    if (op == "where") return one(ops::where(input(c, "condition"), input(c, "a"), input(c, "b")));
    // softmax's and attention's masks: causal, and a key padding tensor that `padding` keeps alive.
    Tensor padding;
    auto mask_of = [&] {
        ops::SoftmaxMask mask;
        mask.causal = p.value("causal", false);
        mask.window = p.value("window", std::size_t{0});
        mask.combined = p.value("combined", false);
        if (in.contains("key_padding")) {
            padding = to_tensor(in.at("key_padding"));
            mask.key_padding = &padding;
        }
        return mask;
    };
    if (op == "softmax") return one(ops::softmax(input(c, "x"), mask_of()));
    if (op == "attention") {
        const ops::SoftmaxMask mask = mask_of();
        const std::size_t heads = p.at("n_head");
        if (in.contains("qkv")) return one(ops::attention(input(c, "qkv"), heads, mask));
        return one(ops::attention(input(c, "q"), input(c, "k"), input(c, "v"), heads, mask));
    }
    if (op == "layer_norm")
        return one(ops::layer_norm(input(c, "x"), input(c, "gamma"), input(c, "beta"), p.at("eps").get<float>()));
    if (op == "embedding") return one(ops::embedding(input(c, "weight"), to_ids(in.at("ids"))));
    if (op == "reshape") return one(ops::reshape(input(c, "x"), p.at("shape").get<std::vector<std::int64_t>>()));
    if (op == "permute") return one(ops::permute(input(c, "x"), p.at("axes").get<std::vector<std::size_t>>()));
    if (op == "transpose") return one(ops::transpose(input(c, "x"), p.at("axis0"), p.at("axis1")));
    if (op == "slice_last") return one(ops::slice_last(input(c, "x"), p.at("begin"), p.at("end")));
    if (op == "split_last") {
        std::vector<Tensor> out;
        for (const Var& v : ops::split_last(input(c, "x"), p.at("sizes").get<std::vector<std::size_t>>()))
            out.push_back(v.value());
        return out;
    }
    if (op == "concat_last") {
        std::vector<Var> parts;
        for (const json& t : in.at("parts")) parts.emplace_back(to_tensor(t));
        return one(ops::concat_last(parts));
    }
    // sum, mean and max take an axis when the case has one; sum and mean without one reduce everything.
    if (op == "sum" || op == "mean" || op == "max") {
        const Var x = input(c, "x");
        if (!p.contains("axis")) return one(op == "sum" ? ops::sum(x) : ops::mean(x));
        const std::int64_t axis = p.at("axis");
        const bool keepdim = p.at("keepdim");
        return one(op == "sum" ? ops::sum(x, axis, keepdim) : op == "mean" ? ops::mean(x, axis, keepdim) : ops::max(x, axis, keepdim));
    }
    if (op == "cross_entropy")
        return one(ops::cross_entropy(input(c, "logits"), to_ids(in.at("targets")), p.at("ignore_index")));
    if (op == "mse") return one(ops::mse(input(c, "prediction"), input(c, "target")));
    FAIL("no runner for op ", op);
    return {};
}

// An element passes when |got − expected| <= atol + rtol·|expected|.
struct Tolerance {
    double rtol, atol;
};
constexpr Tolerance exact{0.0, 0.0};        // pure data movement: copies are bit-exact
constexpr Tolerance rounded{1e-7, 0.0};     // one correctly rounded float op per element (≤ 2⁻²⁴ relative)
constexpr Tolerance float32{1e-5, 1e-6};    // a few float32 ops and libm calls per element

// Compares got with the reference, prints the largest differences and checks every element.
void compare(const json& c, std::size_t output, const Tensor& got, const json& expected, Tolerance tol) {
    const std::string label = c.at("op").get<std::string>() + " / " + c.at("name").get<std::string>() +
                              (output ? " [" + std::to_string(output) + "]" : "");
    INFO(label);
    const Shape want = expected.at("shape").get<std::vector<std::size_t>>();
    REQUIRE_MESSAGE(got.shape() == want, "shape ", to_string(got.shape()), " != expected ", to_string(want));
    const json& data = expected.at("data");
    double max_abs = 0, max_rel = 0, worst_ratio = 0;
    std::size_t worst = 0, failures = 0;
    const bool bitwise = tol.rtol == 0 && tol.atol == 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        double e = data[i].get<double>();
        // A copied float32 is stored as its 9-digit decimal, which rounds back to exactly that float.
        if (bitwise) e = static_cast<float>(e);
        const double g = got.data()[i], diff = std::abs(g - e);
        max_abs = std::max(max_abs, diff);
        // Relative error only where it means something: on references above the absolute floor.
        if (std::abs(e) > std::max(tol.atol, 1e-30)) max_rel = std::max(max_rel, diff / std::abs(e));
        const double bound = tol.atol + tol.rtol * std::abs(e);
        const double ratio = diff == 0 ? 0 : bound == 0 ? INFINITY : diff / bound;
        if (!(ratio <= 1)) ++failures;  // NaN counts as a failure
        if (!(ratio <= worst_ratio)) worst_ratio = ratio, worst = i;
    }
    std::printf("  %-60s max|diff| %.2e  max rel %.2e  %s\n", label.c_str(), max_abs, max_rel,
                failures ? "FAIL" : "ok");
    CHECK_MESSAGE(failures == 0, failures, " of ", got.size(), " elements outside rtol ", tol.rtol, " atol ",
                  tol.atol, "; worst at flat index ", worst, ": got ", got.data()[worst], ", expected ",
                  data[worst].get<double>());
}

// Runs and checks every fixture case whose op is in `ops_in_family`; each op must have a case.
void check_family(std::initializer_list<const char*> ops_in_family, Tolerance tol) {
    for (const char* op : ops_in_family) {
        std::size_t count = 0;
        for (const json& c : fixtures().at("cases")) {
            if (c.at("op") != op) continue;
            ++count;
            const json& expected = c.at("expected");
            std::vector<Tensor> outputs;
            try {
                outputs = run(c);
            } catch (const std::exception& e) {
                FAIL_CHECK(op, " / ", c.at("name").get<std::string>(), " threw: ", e.what());
                continue;
            }
            if (expected.is_array()) {
                REQUIRE(outputs.size() == expected.size());
                for (std::size_t i = 0; i < outputs.size(); ++i) compare(c, i, outputs[i], expected[i], tol);
            } else {
                REQUIRE(outputs.size() == 1);
                compare(c, 0, outputs[0], expected, tol);
            }
        }
        CHECK_MESSAGE(count > 0, "ops.json has no case for ", op);
    }
}

}  // namespace

TEST_CASE("op forward values") {
    static bool header = [] {  // once, not once per subcase
        std::printf("op forward values against PyTorch float64 (tests/fixtures/ops.json):\n");
        return true;
    }();
    (void)header;
    // K ≤ 32 products accumulated in float32 by sgemm; the inputs are O(1), so the rounding error stays
    // well under 1e-6 absolute.
    SUBCASE("matmul") { check_family({"matmul"}, float32); }
    SUBCASE("linear") { check_family({"linear"}, float32); }
    // a ∘ b on two float32 values is correctly rounded; so is x · factor.
    SUBCASE("elementwise") { check_family({"add", "sub", "mul", "scale"}, rounded); }
    // IEEE division and square root are correctly rounded too.
    SUBCASE("division and square root") { check_family({"div", "sqrt"}, rounded); }
    // These pick one of their inputs: the very float.
    SUBCASE("selection") { check_family({"maximum", "minimum", "where", "clamp"}, exact); }
    SUBCASE("relu") { check_family({"relu"}, exact); }
    SUBCASE("activations") { check_family({"gelu_tanh", "gelu_erf", "tanh", "sigmoid", "silu", "silu_mul"}, float32); }
    SUBCASE("exp and log") { check_family({"exp", "log"}, float32); }
    SUBCASE("softmax") { check_family({"softmax"}, float32); }
    SUBCASE("attention") { check_family({"attention"}, float32); }
    SUBCASE("layer_norm") { check_family({"layer_norm"}, float32); }
    SUBCASE("rms_norm") { check_family({"rms_norm"}, float32); }
    SUBCASE("rotary") { check_family({"rotary"}, float32); }
    SUBCASE("embedding") { check_family({"embedding"}, exact); }
    SUBCASE("data movement") {
        check_family({"reshape", "permute", "transpose", "slice_last", "split_last", "concat_last"}, exact);
    }
    // Summed in double, then rounded once to float32.
    SUBCASE("reductions") { check_family({"sum", "mean"}, rounded); }
    SUBCASE("max over an axis") { check_family({"max"}, exact); }
    SUBCASE("losses") { check_family({"cross_entropy", "mse"}, float32); }
}

// The fixtures' reductions are small; this one spans several tiles of columns. Max's gradient too:
// finite differences would need its values spread so far apart that the loss loses precision.
TEST_CASE("sum, mean and max over an axis wider than one tile") {
    const std::size_t A = 3, N = 5, C = 700;
    Tensor x = empty(Shape{A, N, C});
    Generator(8).fill_normal(x.data(), x.size());
    Tensor s, m, top;
    Tensor* wrt[] = {&x};
    const auto g = ad::gradient(
        [&] {
            s = ops::sum(Var(x), 1).value();
            m = ops::mean(Var(x), 1).value();
            Var y = ops::max(ad::leaf(x), 1);
            top = y.value();
            return ops::sum(y);
        },
        wrt);
    REQUIRE(top.shape() == Shape{A, C});
    std::size_t wrong = 0;
    for (std::size_t a = 0; a < A; ++a)
        for (std::size_t c = 0; c < C; ++c) {
            double total = 0;
            std::size_t argmax = 0;
            for (std::size_t n = 0; n < N; ++n) {
                total += x(a, n, c);
                if (x(a, n, c) > x(a, argmax, c)) argmax = n;
            }
            wrong += s(a, c) != static_cast<float>(total) || m(a, c) != static_cast<float>(total / N) ||
                     top(a, c) != x(a, argmax, c);
            for (std::size_t n = 0; n < N; ++n) wrong += g.grads[0](a, n, c) != (n == argmax ? 1.0f : 0.0f);
        }
    CHECK(wrong == 0);
}

TEST_CASE("op error messages") {
    ad::NoGrad no_grad;
    SUBCASE("matmul inner-dimension mismatch names both shapes") {
        const Var a(zeros(Shape{2, 3})), b(zeros(Shape{4, 5}));
        try {
            (void)ops::matmul(a, b);
            FAIL("matmul (2, 3) · (4, 5) did not throw");
        } catch (const ShapeError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.find("(2, 3)") != std::string::npos);
            CHECK(what.find("(4, 5)") != std::string::npos);
        }
        // Batched, with transposes: op(a) (2, 4, 3) · op(b) (2, 5, 4) -> inner 3 vs 5.
        const Var c(zeros(Shape{2, 3, 4})), d(zeros(Shape{2, 5, 4}));
        try {
            (void)ops::matmul(c, d, /*transpose_a=*/true, /*transpose_b=*/false);
            FAIL("matmul (2, 3, 4)ᵀ · (2, 5, 4) did not throw");
        } catch (const ShapeError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.find("(2, 3, 4)") != std::string::npos);
            CHECK(what.find("(2, 5, 4)") != std::string::npos);
        }
    }
    SUBCASE("embedding id out of range names the id") {
        const Var weight(zeros(Shape{5, 3}));
        IdTensor ids = IdTensor::from_shape({2, 2});
        ids(0, 0) = 1, ids(0, 1) = 4, ids(1, 0) = 7, ids(1, 1) = 0;
        try {
            (void)ops::embedding(weight, ids);
            FAIL("embedding with id 7 in a vocabulary of 5 did not throw");
        } catch (const ValueError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.find("7") != std::string::npos);
        }
        ids(1, 0) = -1;
        try {
            (void)ops::embedding(weight, ids);
            FAIL("embedding with id -1 did not throw");
        } catch (const ValueError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.find("-1") != std::string::npos);
        }
    }
    SUBCASE("div, maximum, minimum: shapes that do not broadcast name the op and both shapes") {
        const Var a(zeros(Shape{2, 3})), b(zeros(Shape{4}));
        const std::pair<const char*, Var (*)(const Var&, const Var&)> binaries[] = {
            {"div", ops::div}, {"maximum", ops::maximum}, {"minimum", ops::minimum}};
        for (const auto& [name, op] : binaries) {
            const std::string op_name = name;
            CAPTURE(op_name);
            try {
                (void)op(a, b);
                FAIL(name, " (2, 3) with (4,) did not throw");
            } catch (const ShapeError& e) {
                const std::string what = e.what();
                INFO(what);
                CHECK(what.rfind(std::string(name) + ":", 0) == 0);
                CHECK(what.find("(2, 3)") != std::string::npos);
                CHECK(what.find("(4,)") != std::string::npos);
            }
        }
    }
    SUBCASE("where names all three shapes") {
        const Var condition(zeros(Shape{2, 1})), a(zeros(Shape{3})), b(zeros(Shape{5, 1, 4}));
        try {
            (void)ops::where(condition, a, b);
            FAIL("where (2, 1), (3,), (5, 1, 4) did not throw");
        } catch (const ShapeError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.rfind("where:", 0) == 0);
            CHECK(what.find("(2, 1)") != std::string::npos);
            CHECK(what.find("(3,)") != std::string::npos);
            CHECK(what.find("(5, 1, 4)") != std::string::npos);
        }
        // condition against a and b that do broadcast with each other.
        CHECK_THROWS_AS((void)ops::where(Var(zeros(Shape{3})), Var(zeros(Shape{2, 4})), Var(zeros(Shape{4}))), ShapeError);
    }
    SUBCASE("an axis out of range names the axis and the rank") {
        const Var x(zeros(Shape{2, 3}));
        const std::pair<const char*, Var (*)(const Var&, std::int64_t, bool)> reductions[] = {
            {"sum", ops::sum}, {"mean", ops::mean}, {"max", ops::max}};
        for (const auto& [name, op] : reductions) {
            for (const std::int64_t axis : {2, 7, -3}) {
                const std::string op_name = name;
                CAPTURE(op_name);
                CAPTURE(axis);
                try {
                    (void)op(x, axis, false);
                    FAIL(name, " over axis ", axis, " of a rank-2 tensor did not throw");
                } catch (const ShapeError& e) {
                    const std::string what = e.what();
                    INFO(what);
                    CHECK(what.rfind(std::string(name) + ":", 0) == 0);
                    CHECK(what.find("axis " + std::to_string(axis)) != std::string::npos);
                    CHECK(what.find("rank 2") != std::string::npos);
                }
            }
            CHECK_NOTHROW((void)op(x, -2, false));
            CHECK_NOTHROW((void)op(x, 1, true));
        }
        CHECK_THROWS_AS((void)ops::sum(Var(full(Shape{}, 1.0f)), 0), ShapeError);  // a 0-d tensor has no axis
    }
    SUBCASE("mean and max over an empty axis, clamp with lo > hi: ValueError") {
        const Var x(zeros(Shape{2, 0}));
        CHECK_THROWS_AS((void)ops::mean(x, 1), ValueError);
        CHECK_THROWS_AS((void)ops::max(x, -1), ValueError);
        CHECK(ops::sum(x, 1).value() == zeros(Shape{2}));  // a sum over nothing is 0, as in torch
        CHECK(ops::max(x, 0).shape() == Shape{0});           // nothing to reduce: no error
        try {
            (void)ops::clamp(Var(zeros(Shape{3})), 1.5f, 0.5f);
            FAIL("clamp with lo 1.5 > hi 0.5 did not throw");
        } catch (const ValueError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.rfind("clamp:", 0) == 0);
            CHECK(what.find("1.5") != std::string::npos);
        }
        CHECK_THROWS_AS((void)ops::clamp(Var(zeros(Shape{3})), NAN, 1.0f), ValueError);
        CHECK_NOTHROW((void)ops::clamp(Var(zeros(Shape{3})), 0.5f, 0.5f));
    }
    SUBCASE("log and sqrt outside their domain give IEEE's values, as torch does, and do not throw") {
        Tensor x = empty(Shape{3});
        x(0) = -1.0f, x(1) = 0.0f, x(2) = 4.0f;
        const Tensor l = ops::log(Var(x)).value(), r = ops::sqrt(Var(x)).value();
        CHECK(std::isnan(l(0)));
        CHECK(l(1) == -INFINITY);
        CHECK(l(2) == doctest::Approx(std::log(4.0)));
        CHECK(std::isnan(r(0)));
        CHECK(r(1) == 0.0f);
        CHECK(r(2) == 2.0f);
    }
    SUBCASE("cross_entropy with every target ignored") {
        const Var logits(zeros(Shape{2, 3, 4}));
        IdTensor targets = IdTensor::from_shape({2, 3});
        std::fill(targets.begin(), targets.end(), std::int64_t{-100});
        CHECK_THROWS_AS((void)ops::cross_entropy(logits, targets), ValueError);
        std::fill(targets.begin(), targets.end(), std::int64_t{2});
        CHECK_THROWS_AS((void)ops::cross_entropy(logits, targets, /*ignore_index=*/2), ValueError);
    }
}
