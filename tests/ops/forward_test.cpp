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
    // softmax's and attention's masks: causal, and a key padding tensor that `padding` keeps alive.
    Tensor padding;
    auto mask_of = [&] {
        ops::SoftmaxMask mask;
        mask.causal = p.value("causal", false);
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
    if (op == "sum") return one(ops::sum(input(c, "x")));
    if (op == "mean") return one(ops::mean(input(c, "x")));
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
    SUBCASE("relu") { check_family({"relu"}, exact); }
    SUBCASE("activations") { check_family({"gelu_tanh", "gelu_erf", "tanh"}, float32); }
    SUBCASE("softmax") { check_family({"softmax"}, float32); }
    SUBCASE("attention") { check_family({"attention"}, float32); }
    SUBCASE("layer_norm") { check_family({"layer_norm"}, float32); }
    SUBCASE("embedding") { check_family({"embedding"}, exact); }
    SUBCASE("data movement") {
        check_family({"reshape", "permute", "transpose", "slice_last", "split_last", "concat_last"}, exact);
    }
    // Summed in double, then rounded once to float32.
    SUBCASE("reductions") { check_family({"sum", "mean"}, rounded); }
    SUBCASE("losses") { check_family({"cross_entropy", "mse"}, float32); }
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
    SUBCASE("cross_entropy with every target ignored") {
        const Var logits(zeros(Shape{2, 3, 4}));
        IdTensor targets = IdTensor::from_shape({2, 3});
        std::fill(targets.begin(), targets.end(), std::int64_t{-100});
        CHECK_THROWS_AS((void)ops::cross_entropy(logits, targets), ValueError);
        std::fill(targets.begin(), targets.end(), std::int64_t{2});
        CHECK_THROWS_AS((void)ops::cross_entropy(logits, targets, /*ignore_index=*/2), ValueError);
    }
}
