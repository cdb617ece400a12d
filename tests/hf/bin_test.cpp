// pytorch_model.bin: files torch.save wrote (tests/fixtures/make_bin_fixtures.py) load bit for bit as
// their safetensors twins, through WeightFiles and the GPT-2 loader; hostile and broken files —
// committed fixtures, and pickles assembled here opcode by opcode — each fail with their message.
#include <doctest/doctest.h>

#include <unistd.h>
#include <zip.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "remat/ad/tape.hpp"
#include "remat/core/memory.hpp"
#include "remat/hf/weight_files.hpp"
#include "remat/hf/pytorch_bin.hpp"
#include "remat/hf/safetensors.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/table_model.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fixtures.hpp"

using namespace remat;
using test::same_bits;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

using test::fixtures;
const fs::path bins = fixtures / "bin";

using test::bits;

// The expected message of a file: its path, then the problem.
std::string at(const fs::path& file, const std::string& problem) { return file.string() + ": " + problem; }

// ---- pickles, opcode by opcode (CPython's Lib/pickle.py names)

std::string op(unsigned char c) { return std::string(1, static_cast<char>(c)); }
std::string le(std::uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>(v >> (8 * i));
    return s;
}
// Built by appending: g++ 12 warns falsely (-Wrestrict) on "literal" + std::string.
std::string str(std::string_view s) {
    std::string out(1, 'X');
    out += le(s.size(), 4);
    out += s;
    return out;
}
std::string integer(std::int64_t v) {
    if (v >= 0 && v < 256) return "K" + le(static_cast<std::uint64_t>(v), 1);
    return op(0x8a) + op(8) + le(static_cast<std::uint64_t>(v), 8);  // LONG1
}
std::string global(std::string_view module, std::string_view name) {
    std::string out(1, 'c');
    out += module;
    out += '\n';
    out += name;
    out += '\n';
    return out;
}
std::string ints(const std::vector<std::int64_t>& v) {
    std::string s = "(";
    for (auto x : v) s += integer(x);
    return s + "t";
}
const std::string proto = op(0x80) + op(2);
const std::string ordered_dict = global("collections", "OrderedDict") + ")R";
// torch._utils._rebuild_tensor_v2(('storage', torch.<type>, key, 'cpu', numel), offset, size, stride,
// False, OrderedDict()[, extra...])
std::string tensor(const std::string& key, std::int64_t numel, std::int64_t offset, const std::vector<std::int64_t>& size,
                   const std::vector<std::int64_t>& stride, const std::string& type = "FloatStorage",
                   const std::string& extra = "") {
    return global("torch._utils", "_rebuild_tensor_v2") + "((" + str("storage") + global("torch", type) + str(key) + str("cpu") +
           integer(numel) + "tQ" + integer(offset) + ints(size) + ints(stride) + op(0x89) + ordered_dict + extra + "tR";
}
std::string state_dict(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string s = proto + ordered_dict + "(";
    for (const auto& [name, value] : entries) s += str(name) + value;
    return s + "u.";
}
std::string floats(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += le(bits(static_cast<float>(i)), 4);
    return s;
}

// A zip archive written with libzip: entries in order, stored or deflated.
void write_zip(const fs::path& path, const std::vector<std::pair<std::string, std::string>>& entries, bool deflate = false) {
    int error = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    REQUIRE(z != nullptr);
    for (const auto& [name, data] : entries) {
        zip_source_t* source = zip_source_buffer(z, data.data(), data.size(), 0);
        REQUIRE(source != nullptr);
        const zip_int64_t i = zip_file_add(z, name.c_str(), source, ZIP_FL_ENC_UTF_8);
        REQUIRE(i >= 0);
        REQUIRE(zip_set_file_compression(z, static_cast<zip_uint64_t>(i), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0);
    }
    REQUIRE(zip_close(z) == 0);
}
// A torch-style archive: archive/data.pkl, archive/data/<key> for each storage, archive/version.
fs::path write_bin(const TempDir& tmp, const std::string& pickle,
                   const std::vector<std::pair<std::string, std::string>>& storages = {{"0", floats(12)}}, bool deflate = false) {
    std::vector<std::pair<std::string, std::string>> entries{{"archive/data.pkl", pickle}};
    for (const auto& [key, data] : storages) entries.emplace_back("archive/data/" + key, data);
    entries.emplace_back("archive/version", "3\n");
    const fs::path p = tmp.path / "pytorch_model.bin";
    write_zip(p, entries, deflate);
    return p;
}

}  // namespace

TEST_CASE("pytorch_model.bin: gpt2-tiny loads bitwise equal to model.safetensors") {
    const auto st = hf::SafetensorsFile::open(fixtures / "gpt2-tiny" / "model.safetensors");
    const fs::path path = bins / "gpt2-tiny" / "pytorch_model.bin";
    const auto bin = hf::PytorchBinFile::open(path);
    REQUIRE(bin.tensors().size() == st.tensors().size());
    for (std::size_t i = 0; i < st.tensors().size(); ++i) {
        const hf::TensorInfo& s = st.tensors()[i];
        const hf::TensorInfo& b = bin.tensors()[i];
        CAPTURE(s.name);
        CHECK(b.name == s.name);  // in the state dict's order
        CHECK(b.dtype == hf::DType::F32);
        CHECK(b.shape == s.shape);
        CHECK(same_bits(bin.read_float(b), st.read_float(s)));
    }
    CHECK(bin.find("h.1.mlp.c_fc.weight") == &bin.tensors()[24]);
    CHECK(bin.find("nope") == nullptr);

    SUBCASE("through WeightFiles, from the folder or the file") {
        for (const fs::path& where : {bins / "gpt2-tiny", path}) {
            const auto files = hf::WeightFiles::open(where);
            CHECK(files.description() == path.string());
            std::vector<std::string> names;
            for (const auto& t : st.tensors()) names.push_back(t.name);
            CHECK(files.names() == names);
            REQUIRE(files.find("h.0.attn.c_attn.weight") != nullptr);
            CHECK(files.find("h.0.attn.c_attn.weight")->shape == std::vector<std::size_t>{16, 48});
            CHECK(files.find("h.0.attn.c_attn.weight")->dtype == hf::DType::F32);
            CHECK(files.find("transformer.wte.weight") == nullptr);
            CHECK(same_bits(files.read_float("wte.weight"), st.read_float(*st.find("wte.weight"))));
            CHECK_THROWS_WITH_AS(files.read_float("nope"), at(path, "no tensor \"nope\"").c_str(), hf::FormatError);
            CHECK_THROWS_WITH_AS(files.read_int("wte.weight"),
                                 at(path, "tensor \"wte.weight\": dtype F32 cannot be read as integers (I64, I32, I16, I8 or U8 expected)").c_str(),
                                 hf::FormatError);
        }
    }
}

TEST_CASE("pytorch_model.bin: transformers layout (prefix, tied lm_head, pickle protocol 4)") {
    const auto st = hf::SafetensorsFile::open(fixtures / "gpt2-tiny" / "model.safetensors");
    const auto bin = hf::PytorchBinFile::open(bins / "gpt2-tiny-hf" / "pytorch_model.bin");
    std::size_t compared = 0;
    for (const hf::TensorInfo& s : st.tensors()) {
        const hf::TensorInfo* b = bin.find("transformer." + s.name);
        if (s.name.ends_with(".attn.bias")) {
            CHECK(b == nullptr);
            continue;
        }
        REQUIRE(b != nullptr);
        CHECK(same_bits(bin.read_float(*b), st.read_float(s)));
        ++compared;
    }
    CHECK(compared == 28);
    // lm_head.weight is the same storage as wte: one storage, two names.
    CHECK(same_bits(bin.read_float(*bin.find("lm_head.weight")), st.read_float(*st.find("wte.weight"))));
    CHECK(bin.tensors().size() == 29);
}

TEST_CASE("pytorch_model.bin: old layout (nn.Parameter, attn.bias and attn.masked_bias buffers)") {
    const auto st = hf::SafetensorsFile::open(fixtures / "gpt2-tiny" / "model.safetensors");
    const auto bin = hf::PytorchBinFile::open(bins / "gpt2-tiny-old" / "pytorch_model.bin");
    for (const hf::TensorInfo& s : st.tensors()) {
        CAPTURE(s.name);
        REQUIRE(bin.find(s.name) != nullptr);
        CHECK(same_bits(bin.read_float(*bin.find(s.name)), st.read_float(s)));
    }
    for (const char* name : {"h.0.attn.masked_bias", "h.1.attn.masked_bias"}) {
        const hf::TensorInfo* m = bin.find(name);
        REQUIRE(m != nullptr);
        CHECK(m->shape.empty());
        CHECK(bin.read_float(*m)() == -1e4f);
    }
    CHECK(bin.tensors().size() == st.tensors().size() + 2);
}

TEST_CASE("pytorch_model.bin: every dtype, decoded exactly") {
    const auto bin = hf::PytorchBinFile::open(bins / "dtypes.bin");
    auto f = [&](const char* name) { return bin.read_float(*bin.find(name)); };
    auto i = [&](const char* name) { return bin.read_int(*bin.find(name)); };
    CHECK(bin.find("f16")->dtype == hf::DType::F16);
    CHECK(bin.find("bf16")->dtype == hf::DType::BF16);
    CHECK(bin.find("f64")->dtype == hf::DType::F64);

    const Tensor f32 = f("f32");
    CHECK((f32(0) == 1.5f && f32(1) == -2.0f && f32(2) == 3.25f));
    const Tensor f16 = f("f16");
    CHECK((f16(0) == 1.0f && f16(1) == -2.5f && f16(2) == 65504.0f && f16(3) == 0x1p-24f && std::isinf(f16(4))));
    const Tensor bf16 = f("bf16");
    CHECK(bf16.shape() == Shape{2, 2});
    CHECK((bf16(0, 0) == 1.0f && bf16(0, 1) == -0.5f && bits(bf16(1, 0)) == 0x7F620000u && bf16(1, 1) == 0x1p-133f));
    const Tensor f64 = f("f64");
    CHECK((f64(0) == 0.1f && f64(1) == -1e30f && f64(2) == 2.5f));

    const IdTensor i64 = i("i64");
    CHECK((i64(0) == -(std::int64_t{1} << 62) && i64(1) == 7));
    const IdTensor i32 = i("i32");
    CHECK((i32(0) == std::numeric_limits<std::int32_t>::min() && i32(1) == std::numeric_limits<std::int32_t>::max()));
    const IdTensor i16 = i("i16");
    CHECK((i16(0) == -32768 && i16(1) == 5));
    const IdTensor i8 = i("i8");
    CHECK((i8(0) == -128 && i8(1) == 127));
    const IdTensor u8 = i("u8");
    CHECK((u8(0) == 0 && u8(1) == 255));

    const fs::path path = bins / "dtypes.bin";
    CHECK_THROWS_WITH_AS(f("bool"), at(path, "tensor \"bool\": dtype BOOL cannot be read as float (F32, F16, BF16 or F64 expected)").c_str(),
                         hf::FormatError);
    CHECK_THROWS_WITH_AS(i("bool"), at(path, "tensor \"bool\": dtype BOOL cannot be read as integers (I64, I32, I16, I8 or U8 expected)").c_str(),
                         hf::FormatError);
}

TEST_CASE("pytorch_model.bin: views of shared storages are gathered contiguous") {
    const auto bin = hf::PytorchBinFile::open(bins / "shared.bin");
    auto f = [&](const char* name) { return bin.read_float(*bin.find(name)); };
    auto base = [](std::size_t i, std::size_t j) { return static_cast<float>(6 * i + j); };  // arange(24).reshape(4, 6)

    const Tensor b = f("base");
    REQUIRE(b.shape() == Shape{4, 6});
    for (std::size_t k = 0; k < 24; ++k) CHECK(b.data()[k] == static_cast<float>(k));
    CHECK(same_bits(f("tied"), b));

    const Tensor row = f("row");
    REQUIRE(row.shape() == Shape{6});
    for (std::size_t j = 0; j < 6; ++j) CHECK(row(j) == base(1, j));

    const Tensor t = f("transposed");
    REQUIRE(t.shape() == Shape{6, 4});
    for (std::size_t j = 0; j < 6; ++j)
        for (std::size_t i = 0; i < 4; ++i) CHECK(t(j, i) == base(i, j));

    const Tensor columns = f("columns");
    REQUIRE(columns.shape() == Shape{4, 3});
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 3; ++j) CHECK(columns(i, j) == base(i, j + 1));

    const Tensor strided = f("strided");
    REQUIRE(strided.shape() == Shape{2, 2});
    CHECK((strided(0, 0) == 0.0f && strided(0, 1) == 3.0f && strided(1, 0) == 12.0f && strided(1, 1) == 15.0f));

    const Tensor scalar = f("scalar");
    CHECK(scalar.dimension() == 0);
    CHECK(scalar() == 15.0f);
    CHECK(f("empty").shape() == Shape{0, 6});

    const IdTensor ids = bin.read_int(*bin.find("position_ids"));  // arange(5).expand((1, -1)): stride (0, 1)
    REQUIRE(ids.shape() == std::vector<std::size_t>{1, 5});
    for (std::size_t j = 0; j < 5; ++j) CHECK(ids(0, j) == static_cast<std::int64_t>(j));

    const Tensor half = f("transposed_f16");  // arange(6, f16).reshape(2, 3).t()
    REQUIRE(half.shape() == Shape{3, 2});
    for (std::size_t j = 0; j < 3; ++j)
        for (std::size_t i = 0; i < 2; ++i) CHECK(half(j, i) == static_cast<float>(3 * i + j));
}

TEST_CASE("pytorch_model.bin: a GPT-2 loaded from it gives the safetensors logits") {
    auto reference = test::load_table_model("GPT2LMHeadModel", fixtures / "gpt2-tiny");
    IdTensor ids = IdTensor::from_shape({2, 7});
    for (std::size_t k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>((k * 37 + 5) % 64);
    ad::NoGrad no_grad;
    const Tensor expected = test::logits_of(*reference, ids).value();
    for (const char* folder : {"gpt2-tiny", "gpt2-tiny-hf", "gpt2-tiny-old"}) {
        CAPTURE(folder);
        hf::LoadReport report;
        auto model = test::load_table_model("GPT2LMHeadModel", bins / folder, &report);
        CHECK(report.warnings.empty());  // attn.bias, attn.masked_bias and the tied lm_head are known
        CHECK(same_bits(test::logits_of(*model, ids).value(), expected));
    }
}

TEST_CASE("pytorch_model.bin: hostile and broken fixtures") {
    auto fails = [](const char* file, const std::string& problem) {
        const fs::path p = bins / file;
        CAPTURE(file);
        CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p), at(p, problem).c_str(), hf::FormatError);
    };
    fails("os-system.bin", "refusing to load global \"os.system\" (only a state dict's tensors are allowed)");
    fails("unknown-opcode.bin", "data.pkl at byte 5: unknown pickle opcode 0xff");
    fails("missing-storage.bin", "storage \"1\" is missing from the archive (no \"archive/data/1\")");
    fails("out-of-bounds.bin",
          "tensor \"w\": size (4, 4) with stride (4, 1) at offset 0 reaches past the end of its storage \"0\" of 12 elements");
    fails("short-storage.bin", "storage \"0\" (\"archive/data/0\") holds 12 bytes, but 4 FloatStorage elements need 16");
    // 529 bytes claiming a 1 GiB storage: refused on open, before anything is allocated for it (the
    // storages were read eagerly, and this allocated and zeroed 1 GiB before a CRC error).
    {
        const memory::PeakScope peak;
        fails("lying-size.bin", "storage \"0\" (\"archive/data/0\"): an uncompressed entry of 16 bytes claims to hold 1073741824");
        CHECK(peak.peak_above_baseline() < (std::size_t{1} << 20));
    }
    fails("truncated.bin", "not a readable zip archive (Not a zip archive)");
    fails("not-a-zip.bin", "not a readable zip archive (Not a zip archive)");
    fails("legacy.bin",
          "a torch.save file from before PyTorch 1.6 (a bare pickle, not a zip archive); re-save it with a newer PyTorch or "
          "convert it to model.safetensors");
    fails("no-such.bin", "cannot read: No such file or directory");

    SUBCASE("through WeightFiles and hf::load") {
        TempDir tmp;
        fs::copy_file(bins / "os-system.bin", tmp.path / "pytorch_model.bin");
        fs::copy_file(bins / "gpt2-tiny" / "config.json", tmp.path / "config.json");
        const std::string message =
            at(tmp.path / "pytorch_model.bin", "refusing to load global \"os.system\" (only a state dict's tensors are allowed)");
        CHECK_THROWS_WITH_AS(hf::WeightFiles::open(tmp.path), message.c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(test::load_table_model("GPT2LMHeadModel", tmp.path), message.c_str(), hf::FormatError);
    }
}

TEST_CASE("pytorch_model.bin: the restricted unpickler, opcode by opcode") {
    TempDir tmp;
    const fs::path p = tmp.path / "pytorch_model.bin";
    const std::string w = tensor("0", 12, 0, {3, 4}, {4, 1});

    SUBCASE("a hand-assembled state dict loads, stored or deflated") {
        for (bool deflate : {false, true}) {
            write_bin(tmp, state_dict({{"w", w}, {"t", tensor("0", 12, 1, {2, 3}, {1, 4})}}), {{"0", floats(12)}}, deflate);
            const auto bin = hf::PytorchBinFile::open(p);
            REQUIRE(bin.tensors().size() == 2);
            const Tensor t = bin.read_float(*bin.find("t"));
            REQUIRE(t.shape() == Shape{2, 3});
            CHECK((t(0, 0) == 1.0f && t(0, 1) == 5.0f && t(0, 2) == 9.0f && t(1, 0) == 2.0f && t(1, 2) == 10.0f));
        }
    }
    SUBCASE("a tensor pickled as a parameter, and one pickled twice (memo)") {
        const std::string param = global("torch._utils", "_rebuild_parameter") + "(" + w + "q" + op(7) + op(0x88) + ordered_dict + "tR";
        write_bin(tmp, state_dict({{"p", param}, {"again", "h" + op(7)}}));
        const auto bin = hf::PytorchBinFile::open(p);
        CHECK(same_bits(bin.read_float(*bin.find("p")), bin.read_float(*bin.find("again"))));
    }

    struct Case {
        const char* what;
        std::string pickle;
        std::string problem;
    };
    const std::string other = "only a state dict's tensors are allowed";
    const std::vector<Case> cases = {
        {"STACK_GLOBAL of builtins.eval", op(0x80) + op(4) + op(0x8c) + op(8) + "builtins" + op(0x8c) + op(4) + "eval" + op(0x93) + ".",
         "refusing to load global \"builtins.eval\" (" + other + ")"},
        {"the v1 rebuild function", proto + global("torch._utils", "_rebuild_tensor") + ".",
         "refusing to load global \"torch._utils._rebuild_tensor\" (" + other + ")"},
        {"UntypedStorage", proto + global("torch", "UntypedStorage") + ".", "refusing to load global \"torch.UntypedStorage\" (" + other + ")"},
        {"a control character in a name", proto + global("os\x01", "system") + ".",
         "refusing to load global \"os\\x01.system\" (" + other + ")"},
        {"INST", proto + "iposix\nsystem\n.", "data.pkl at byte 2: pickle opcode INST is not supported (a state dict does not need it)"},
        {"PROTO 6", op(0x80) + op(6) + "N.", "data.pkl at byte 0: pickle protocol 6 is not supported"},
        {"stack underflow", proto + op(0x86) + ".", "data.pkl at byte 2: stack underflow"},
        {"a pop below the MARK", proto + "N(" + op(0x85) + ".", "data.pkl at byte 4: stack underflow"},
        {"a memo read before a write", proto + "h" + op(7) + ".", "data.pkl at byte 2: memo entry 7 is read before it is written"},
        {"BINPUT on an empty stack", proto + "q" + op(0) + ".", "data.pkl at byte 2: stack underflow"},
        {"nesting", proto + std::string(65, '('), "data.pkl at byte 66: nesting deeper than 64 levels"},
        {"no STOP", proto + "N", "data.pkl ends without STOP"},
        {"a truncated string", proto + "X" + le(100, 4) + "abc.", "data.pkl at byte 2: truncated: the opcode needs 100 more bytes, 4 remain"},
        {"a truncated GLOBAL", proto + "ctorch", "data.pkl at byte 2: truncated: GLOBAL's name has no end of line"},
        {"a huge LONG1", proto + op(0x8a) + op(9) + std::string(9, '\x01') + ".", "data.pkl at byte 2: integer of 9 bytes is too large"},
        {"a FRAME past the end", op(0x80) + op(4) + op(0x95) + le(1000, 8) + "N.", "data.pkl at byte 2: FRAME of 1000 bytes runs past the end of data.pkl"},
        {"STOP with two values", proto + "NN.", "data.pkl at byte 4: STOP with 2 values and 0 open MARKs on the stack (expected one value)"},
        {"calling a storage class", proto + global("torch", "FloatStorage") + ")R.",
         "data.pkl at byte 23: REDUCE may only call collections.OrderedDict, torch._utils._rebuild_tensor_v2 or "
         "torch._utils._rebuild_parameter, not torch.FloatStorage"},
        {"calling a string", proto + str("os") + ")R.",
         "data.pkl at byte 10: REDUCE may only call collections.OrderedDict, torch._utils._rebuild_tensor_v2 or "
         "torch._utils._rebuild_parameter, not a string"},
        {"OrderedDict with arguments", proto + global("collections", "OrderedDict") + "(Nt" + "R.",
         "data.pkl at byte 30: collections.OrderedDict is called with arguments"},
        {"BUILD of a tuple", proto + ")}b.", "data.pkl at byte 4: BUILD of a tuple with a dict is not allowed (only an OrderedDict's _metadata)"},
        {"SETITEMS with an odd count", proto + "}(NNNu.", "data.pkl at byte 7: SETITEMS with an odd number of values"},
        {"APPEND to a dict", proto + "}Na.", "data.pkl at byte 4: APPEND(S) on a dict"},
        {"SETITEM on a list", proto + "]NNs.", "data.pkl at byte 5: SETITEM(S) on a list"},
        {"a list containing itself", proto + "]q" + op(0) + "h" + op(0) + "a.", "data.pkl holds a list, not a state dict (a dict of tensors)"},
        {"not a dict", proto + "N.", "data.pkl holds None, not a state dict (a dict of tensors)"},
        {"a non-tensor entry", state_dict({{"epoch", integer(3)}}), "state dict entry \"epoch\" is an int, not a tensor"},
        {"a non-string key", proto + "}" + integer(3) + w + "s.", "the state dict has a key that is an int, not a string"},
        {"a name twice", state_dict({{"w", w}, {"w", w}}), "tensor \"w\" appears twice in the state dict"},
        {"a persistent id of the wrong shape", proto + "(" + str("storage") + "tQ.",
         "data.pkl at byte 16: persistent id is not ('storage', type, key, location, numel)"},
        {"a persistent id with a string for a type", proto + "(" + str("storage") + str("x") + str("0") + str("cpu") + integer(12) + "tQ.",
         "data.pkl at byte 38: persistent id's storage type is a string, not a torch.*Storage"},
        {"a storage described twice", state_dict({{"a", w}, {"b", tensor("0", 6, 0, {6}, {1})}}),
         "storage \"0\" is described twice, as 12 FloatStorage elements and as 6 FloatStorage"},
        {"a negative stride", state_dict({{"w", tensor("0", 12, 0, {3}, {-1})}}),
         "data.pkl at byte 168: stride must be a non-negative int, not -1"},
        {"size and stride of different lengths", state_dict({{"w", tensor("0", 12, 0, {3, 4}, {1})}}),
         "data.pkl at byte 162: size (3, 4) and stride (1,) differ in length"},
        {"tensor metadata", state_dict({{"w", tensor("0", 12, 0, {3}, {1}, "FloatStorage", "}" + str("neg") + op(0x88) + "s")}}),
         "data.pkl at byte 171: tensor metadata (conjugate or negative bits) is not supported"},
        {"a stride that overflows", state_dict({{"w", tensor("0", 12, 0, {3}, {std::int64_t{1} << 62})}}),
         "tensor \"w\": size (3,) with stride (4611686018427387904,) at offset 0 reaches past the end of its storage \"0\" of 12 elements"},
        {"an offset past the end", state_dict({{"w", tensor("0", 12, 12, {1}, {1})}}),
         "tensor \"w\": size (1,) with stride (1,) at offset 12 reaches past the end of its storage \"0\" of 12 elements"},
        {"an empty view past the end", state_dict({{"w", tensor("0", 12, 13, {0}, {1})}}),
         "tensor \"w\": size (0,) with stride (1,) at offset 13 reaches past the end of its storage \"0\" of 12 elements"},
        {"a size that overflows", state_dict({{"w", tensor("0", 12, 0, {std::int64_t{1} << 40, std::int64_t{1} << 40}, {0, 0})}}),
         "tensor \"w\": size (1099511627776, 1099511627776) overflows"},
        {"a broadcast view", state_dict({{"w", tensor("0", 12, 0, {1000}, {0})}}),
         "tensor \"w\": size (1000,) has 1000 elements, more than its storage \"0\" holds (12); broadcast views are not supported"},
        {"an unknown storage type", state_dict({{"w", tensor("0", 12, 0, {3}, {1}, "ComplexFloatStorage")}}),
         "refusing to load global \"torch.ComplexFloatStorage\" (" + other + ")"},
        {"a storage size that overflows", state_dict({{"w", tensor("0", std::int64_t{1} << 62, 0, {3}, {1})}}),
         "storage \"0\" (\"archive/data/0\") holds 48 bytes, but 4611686018427387904 FloatStorage elements need more"},
    };
    SUBCASE("every refusal, with its message") {
        for (const Case& c : cases) {
            CAPTURE(c.what);
            write_bin(tmp, c.pickle);
            CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p), at(p, c.problem).c_str(), hf::FormatError);
        }
    }

    SUBCASE("too many objects") {
        write_bin(tmp, proto + std::string(hf::PytorchBinFile::max_pickle_objects + 1, 'N') + ".");
        CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p),
                             at(p, "data.pkl at byte " + std::to_string(hf::PytorchBinFile::max_pickle_objects + 2) +
                                       ": more than 2097152 objects").c_str(),
                             hf::FormatError);
    }
    SUBCASE("the archive around the pickle") {
        write_zip(p, {{"archive/version", "3\n"}});
        CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p), at(p, "not a PyTorch archive (no \"archive/data.pkl\")").c_str(), hf::FormatError);
        write_zip(p, {{"data.pkl", state_dict({})}});
        CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p),
                             at(p, "not a PyTorch archive (its first entry \"data.pkl\" is not in a folder)").c_str(), hf::FormatError);
        write_zip(p, {{"archive/data.pkl", state_dict({{"w", w}})}, {"archive/data/0", floats(12)}, {"archive/byteorder", "big"}});
        CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p), at(p, "byte order \"big\" is not supported (only \"little\")").c_str(),
                             hf::FormatError);
        write_zip(p, {{"archive/data.pkl", state_dict({{"w", w}})}, {"archive/data/0", floats(12)}, {"archive/byteorder", "little"}});
        CHECK(hf::PytorchBinFile::open(p).tensors().size() == 1);
    }
    SUBCASE("a corrupted storage fails its CRC") {
        write_bin(tmp, state_dict({{"w", w}}));
        std::string bytes;
        {
            std::ifstream in(p, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        const std::size_t where = bytes.find(floats(12));
        REQUIRE(where != std::string::npos);
        bytes[where + 5] ^= 0x40;
        std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        // Storages are read with their tensors: opening checks only what the archive claims.
        const auto f = hf::PytorchBinFile::open(p);
        CHECK_THROWS_WITH_AS(f.read_float(*f.find("w")), at(p, "storage \"0\": cannot read (CRC error)").c_str(), hf::FormatError);
    }
    SUBCASE("only the storages of the tensors read are read") {
        // "w" views storage 0; "unused" has a storage of its own, corrupted: loading "w" never touches it.
        const std::string other(48, '\x11');
        write_bin(tmp, state_dict({{"w", w}, {"unused", tensor("1", 12, 0, {12}, {1})}}), {{"0", floats(12)}, {"1", other}});
        std::string bytes;
        {
            std::ifstream in(p, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        const std::size_t where = bytes.find(other);
        REQUIRE(where != std::string::npos);
        bytes[where + 5] ^= 0x40;
        std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        const auto f = hf::PytorchBinFile::open(p);
        CHECK(f.read_float(*f.find("w")).size() == 12);
        CHECK_THROWS_WITH_AS(f.read_float(*f.find("unused")), at(p, "storage \"1\": cannot read (CRC error)").c_str(), hf::FormatError);
    }
    SUBCASE("a deflated entry claiming more than deflate can expand to") {
        // 4 floats deflate to a few bytes; their entry then claims 64 MiB.
        write_bin(tmp, state_dict({{"w", tensor("0", 1 << 24, 0, {1 << 24}, {1})}}), {{"0", std::string(64, '\0')}}, true);
        std::string bytes;
        {
            std::ifstream in(p, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        // Patch the sizes the local header and the central directory give for archive/data/0.
        const std::string name = "archive/data/0";
        for (const auto& [signature, sizes_at, name_at] : {std::tuple{std::string("PK\x03\x04"), 22, 30}, {std::string("PK\x01\x02"), 24, 46}})
            for (std::size_t at = bytes.find(signature); at != std::string::npos; at = bytes.find(signature, at + 4))
                if (bytes.compare(at + name_at, name.size(), name) == 0) {
                    const std::uint32_t claimed = 1u << 26;
                    std::memcpy(bytes.data() + at + sizes_at, &claimed, 4);  // uncompressed size only
                }
        std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        const memory::PeakScope peak;
        CHECK_THROWS_WITH_AS(hf::PytorchBinFile::open(p), doctest::Contains("claims 67108864 bytes from"), hf::FormatError);
        CHECK(peak.peak_above_baseline() < (std::size_t{1} << 20));
    }
}
