// hf::load / hf::save: round trips, prefixes, dtypes, shards, and the errors that list every problem.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include "models/bert/pretrained.hpp"
#include "models/gpt2/pretrained.hpp"
#include "remat/checkpoint.hpp"
#include "remat/layers/modes.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
using test::TempDir;
using test::same_bits;
namespace fs = std::filesystem;

namespace {
using test::fixtures;

gpt2::Config tiny_config() { return gpt2::Config::from_file(fixtures / "gpt2-tiny" / "config.json"); }

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// v rounded to IEEE half precision (to nearest, ties to even), as value and as bits; |v| < 65504.
// Written out rather than through _Float16, which clang 14 lacks on x86.
float to_half(float v) {
    const double a = std::fabs(v);
    int e = 0;
    (void)std::frexp(a, &e);                                // a = m · 2^e, m in [0.5, 1)
    const double ulp = std::ldexp(1.0, std::max(e - 11, -24));  // 10 fraction bits; subnormals below 2^-14
    return static_cast<float>(std::copysign(std::nearbyint(a / ulp) * ulp, v));
}
std::uint16_t half_bits(float h) {  // h exactly a half value
    const double a = std::fabs(h);
    const std::uint16_t sign = std::signbit(h) ? 0x8000 : 0;
    if (a < std::ldexp(1.0, -14)) return static_cast<std::uint16_t>(sign | static_cast<unsigned>(a * std::ldexp(1.0, 24)));
    int e = 0;
    const double m = std::frexp(a, &e);  // a = m · 2^e: biased exponent e − 1 + 15, fraction (2m − 1) · 1024
    return static_cast<std::uint16_t>(sign | static_cast<unsigned>(e + 14) << 10 | static_cast<unsigned>((2 * m - 1) * 1024));
}

// All tensors of the fixture, renamed and converted as asked.
std::vector<std::pair<std::string, Tensor>> fixture_tensors(const std::string& prefix = "") {
    auto f = hf::SafetensorsFile::open(fixtures / "gpt2-tiny" / "model.safetensors");
    std::vector<std::pair<std::string, Tensor>> out;
    for (const auto& t : f.tensors()) out.emplace_back(prefix + t.name, f.read_float(t));
    return out;
}

void write_tensors(const fs::path& file, const std::vector<std::pair<std::string, Tensor>>& tensors) {
    std::vector<hf::WriteTensor> entries;
    for (const auto& [name, t] : tensors) entries.push_back(hf::f32(name, t));
    hf::write_safetensors(file, entries, {{"format", "pt"}});
}

Tensor logits_of(gpt2::Model& model) {
    nn::testmode(model);
    IdTensor ids = IdTensor::from_shape({1, 4});
    ids = {{1, 5, 9, 2}};
    ad::NoGrad no_grad;
    return model(ids).value();
}

}  // namespace

TEST_CASE("hf::save then hf::load reproduces the model bit for bit") {
    auto original = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    TempDir dir;
    hf::save(original, tiny_config().to_json(), dir.path);
    CHECK(fs::exists(dir.path / "config.json"));
    auto f = hf::SafetensorsFile::open(dir.path / "model.safetensors");
    CHECK(f.tensors().front().name == "transformer.wte.weight");  // HF's save_pretrained names
    CHECK(f.metadata() == std::vector<std::pair<std::string, std::string>>{{"format", "pt"}});
    auto loaded = gpt2::from_pretrained(dir.path);
    const auto a = tree::named_parameters(original), b = tree::named_parameters(loaded);
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_bits(a[i].second->value, b[i].second->value));
    CHECK(same_bits(logits_of(original), logits_of(loaded)));
}

TEST_CASE("the base-model prefix is accepted either way") {
    auto reference = gpt2::from_pretrained(fixtures / "gpt2-tiny");  // saved without "transformer."
    TempDir dir;
    write_text(dir.path / "config.json", tiny_config().to_json());
    write_tensors(dir.path / "model.safetensors", fixture_tensors("transformer."));
    hf::LoadReport report;
    auto prefixed = gpt2::from_pretrained(dir.path, &report);
    CHECK(same_bits(logits_of(reference), logits_of(prefixed)));
    CHECK(report.warnings.empty());  // "transformer.h.0.attn.bias" is a known buffer too

    // And a BertModel (no "bert." in its paths) from a BertForMaskedLM checkpoint (with it).
    Generator init(0);
    auto base = bert::create_base(bert::Config::from_file(fixtures / "bert-tiny" / "config.json"), init, nullptr, true);
    hf::LoadReport bert_report = hf::load(base, fixtures / "bert-tiny");
    REQUIRE(bert_report.warnings.size() == 1);
    CHECK(bert_report.warnings[0].find("cls.predictions.bias") != std::string::npos);  // the MLM head is unused here
    CHECK(bert_report.warnings[0].find("bert.pooler") == std::string::npos);           // but the pooler is used
}

TEST_CASE("F16, BF16 and F64 checkpoints load as float32") {
    auto reference = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    for (hf::DType dtype : {hf::DType::F16, hf::DType::BF16, hf::DType::F64}) {
        CAPTURE(hf::name(dtype));
        TempDir dir;
        write_text(dir.path / "config.json", tiny_config().to_json());
        // Encode each float as the dtype (values chosen exactly representable: round through it).
        const auto tensors = fixture_tensors();
        std::vector<std::vector<std::byte>> storage;
        std::vector<hf::WriteTensor> entries;
        for (const auto& [name, t] : tensors) {
            std::vector<std::byte> bytes(t.size() * hf::size_of(dtype));
            for (std::size_t i = 0; i < t.size(); ++i) {
                float v = t.data()[i];
                std::uint32_t u;
                std::memcpy(&u, &v, 4);
                if (dtype == hf::DType::BF16) {
                    const auto half = static_cast<std::uint16_t>(u >> 16);  // truncation: exact in BF16
                    std::memcpy(&bytes[2 * i], &half, 2);
                } else if (dtype == hf::DType::F16) {
                    const std::uint16_t h = half_bits(to_half(v));
                    std::memcpy(&bytes[2 * i], &h, 2);
                } else {
                    const double d = v;
                    std::memcpy(&bytes[8 * i], &d, 8);
                }
            }
            storage.push_back(std::move(bytes));
            entries.push_back({name, dtype, std::vector<std::size_t>(t.shape().begin(), t.shape().end()), storage.back()});
        }
        hf::write_safetensors(dir.path / "model.safetensors", entries);
        auto model = gpt2::from_pretrained(dir.path);
        const Tensor& got = model.transformer.h[1].mlp.c_fc.weight.value;
        const Tensor& want = reference.transformer.h[1].mlp.c_fc.weight.value;
        for (std::size_t i = 0; i < got.size(); ++i) {
            float expected = want.data()[i];
            if (dtype == hf::DType::BF16) {
                std::uint32_t u;
                std::memcpy(&u, &expected, 4);
                u &= 0xFFFF0000u;
                std::memcpy(&expected, &u, 4);
            } else if (dtype == hf::DType::F16) {
                expected = to_half(expected);
            }
            CHECK(got.data()[i] == expected);
        }
    }
}

TEST_CASE("sharded checkpoints") {
    auto reference = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    TempDir dir;
    write_text(dir.path / "config.json", tiny_config().to_json());
    const auto tensors = fixture_tensors();
    const std::size_t half = tensors.size() / 2;
    write_tensors(dir.path / "model-00001-of-00002.safetensors", {tensors.begin(), tensors.begin() + half});
    write_tensors(dir.path / "model-00002-of-00002.safetensors", {tensors.begin() + half, tensors.end()});
    std::string index = R"({"metadata": {"total_size": 0}, "weight_map": {)";
    for (std::size_t i = 0; i < tensors.size(); ++i)
        index += (i ? ", \"" : "\"") + tensors[i].first + "\": \"model-0000" + (i < half ? "1" : "2") + "-of-00002.safetensors\"";
    write_text(dir.path / "model.safetensors.index.json", index + "}}");
    CHECK(same_bits(logits_of(reference), [&] {
        auto m = gpt2::from_pretrained(dir.path);
        return logits_of(m);
    }()));

    fs::remove(dir.path / "model-00002-of-00002.safetensors");
    CHECK_THROWS_WITH_AS(gpt2::from_pretrained(dir.path),
                         ((dir.path / "model.safetensors.index.json").string() + ": shard model-00002-of-00002.safetensors is missing").c_str(),
                         hf::FormatError);
    write_text(dir.path / "model.safetensors.index.json", R"({"weight_map": {"wte.weight": "../evil.safetensors"}})");
    CHECK_THROWS_WITH_AS(gpt2::from_pretrained(dir.path), doctest::Contains("is not a plain file name: ../evil.safetensors"),
                         hf::FormatError);
}

TEST_CASE("loading lists every missing or mis-shaped tensor, and changes nothing") {
    TempDir dir;
    write_text(dir.path / "config.json", tiny_config().to_json());
    auto tensors = fixture_tensors();
    std::erase_if(tensors, [](const auto& t) { return t.first == "h.1.ln_2.weight" || t.first == "ln_f.bias"; });
    for (auto& [name, t] : tensors)
        if (name == "h.0.attn.c_attn.weight") t = zeros(Shape{48, 16});  // transposed: (out, in)
    tensors.emplace_back("h.0.attn.extra", zeros(Shape{2}));
    write_tensors(dir.path / "model.safetensors", tensors);
    Generator init(3);
    auto model = gpt2::create(tiny_config(), init);
    const Tensor before = model.transformer.wte.weight.value;
    const std::string file = (dir.path / "model.safetensors").string();
    CHECK_THROWS_WITH_AS(hf::load(model, dir.path),
                         (file + ": 3 of 28 tensors cannot be loaded:\n"
                                 "  transformer.h.0.attn.c_attn.weight: expected shape (16, 48), found (48, 16) (as h.0.attn.c_attn.weight)\n"
                                 "  missing transformer.h.1.ln_2.weight (expected shape (16,))\n"
                                 "  missing transformer.ln_f.bias (expected shape (16,))")
                             .c_str(),
                         hf::LoadError);
    CHECK(same_bits(model.transformer.wte.weight.value, before));  // nothing half-loaded

    Generator init2(3);
    auto bert_model = bert::create(bert::Config::from_file(fixtures / "bert-tiny" / "config.json"), init2);
    CHECK_THROWS_WITH_AS(hf::load(bert_model, fixtures / "gpt2-tiny"),
                         doctest::Contains("(none of the model's tensors were found: is this checkpoint for this architecture?)"),
                         hf::LoadError);
    CHECK_THROWS_WITH_AS(hf::load(model, dir.path / "nowhere"), ((dir.path / "nowhere").string() + ": no such file or folder").c_str(),
                         hf::FormatError);
}

TEST_CASE("a checkpointed model loads and saves the same") {
    auto ckpt = set_checkpointing(gpt2::from_pretrained(fixtures / "gpt2-tiny"), Policy::sqrt());
    auto plain = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    TempDir dir;
    hf::save(ckpt, tiny_config().to_json(), dir.path);
    Generator init(9);
    auto reloaded = set_checkpointing(gpt2::create(tiny_config(), init));
    hf::load(reloaded, dir.path);
    const auto a = tree::named_parameters(plain), b = tree::named_parameters(reloaded);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].first == b[i].first);
        CHECK(same_bits(a[i].second->value, b[i].second->value));
    }
}

TEST_CASE("an interrupted or refused save leaves the previous files intact") {
    auto model = gpt2::from_pretrained(fixtures / "gpt2-tiny");
    TempDir dir;
    hf::save(model, tiny_config().to_json(), dir.path);
    const auto before = fs::file_size(dir.path / "model.safetensors");
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);  // read-only folder
    if (::geteuid() != 0) {  // root ignores permissions
        CHECK_THROWS_AS(hf::save(model, tiny_config().to_json(), dir.path), hf::FormatError);
        CHECK(fs::file_size(dir.path / "model.safetensors") == before);
    }
    fs::permissions(dir.path, fs::perms::owner_all);
    CHECK_THROWS_WITH_AS(hf::save(model, "{}", dir.path / "model.safetensors" / "sub"),
                         doctest::Contains("cannot create the output folder"), hf::FormatError);
    CHECK(fs::file_size(dir.path / "model.safetensors") == before);
}
