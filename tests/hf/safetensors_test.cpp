// The safetensors reader and writer: bit-exact round trips, dtype decoding against hand-computed values,
// atomic writes, and every malformed file the reference implementation rejects, each with its message.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "remat/hf/safetensors.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/same_bits.hpp"
#include "tests/support/read_text.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

// A scratch folder with the safetensors files a test writes.
struct SafetensorsDir : test::TempDir {
    // A file holding exactly `bytes`.
    fs::path file(const std::string& bytes, const std::string& name = "t.safetensors") const { return write(name, bytes); }
    // A safetensors file: the header's length as 8 bytes little-endian, the header, the data section.
    fs::path raw(const std::string& header, const std::string& data = "") const {
        std::string length(8, '\0');
        for (std::size_t i = 0; i < 8; ++i) length[i] = static_cast<char>(static_cast<std::uint64_t>(header.size()) >> (8 * i));
        return file(length + header + data);
    }
    std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), fs::directory_iterator())); }
};

std::string le64(std::uint64_t n) {
    std::string s(8, '\0');
    for (std::size_t i = 0; i < 8; ++i) s[i] = static_cast<char>(n >> (8 * i));
    return s;
}

using test::read_text;

std::string zeros(std::size_t n) { return std::string(n, '\0'); }

// Little-endian bytes of a list of values, for hand-built data sections.
template <class T>
std::string bytes_of(std::initializer_list<T> values) {
    std::string s(values.size() * sizeof(T), '\0');
    std::memcpy(s.data(), values.begin(), s.size());
    return s;
}

using test::bits;

// Opening the file raises FormatError "<path>: <message>".
#define CHECK_REJECTS_FILE(bytes, message)                                                                                \
    do {                                                                                                                  \
        const fs::path p_ = dir.file(bytes);                                                                              \
        CHECK_THROWS_WITH_AS(hf::SafetensorsFile::open(p_), (p_.string() + ": " + (message)).c_str(), hf::FormatError); \
    } while (false)
#define CHECK_REJECTS(header, data, message)                                                                              \
    do {                                                                                                                  \
        const fs::path p_ = dir.raw(header, data);                                                                        \
        CHECK_THROWS_WITH_AS(hf::SafetensorsFile::open(p_), (p_.string() + ": " + (message)).c_str(), hf::FormatError); \
    } while (false)

// One valid F32 entry of shape [2] at [0, 8].
const std::string a8 = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

}  // namespace

TEST_CASE("safetensors: round trip of F32, I64 and an F64 scalar with metadata is bit-exact") {
    SafetensorsDir dir;
    Tensor w = empty({2, 3});
    const std::uint32_t patterns[] = {0x00000000u, 0x80000000u, 0x7FC00001u /* NaN payload */, 0x00000001u /* subnormal */,
                                      0x7F800000u, 0x3DCCCCCDu};
    for (std::size_t i = 0; i < 6; ++i) w.data()[i] = std::bit_cast<float>(patterns[i]);
    IdTensor ids = IdTensor::from_shape({4});
    ids(0) = std::numeric_limits<std::int64_t>::min(), ids(1) = -1, ids(2) = 0, ids(3) = std::numeric_limits<std::int64_t>::max();
    const double step = 0.1;
    Tensor empty_rows = empty({0, 5});

    const fs::path p = dir / "model.safetensors";
    const std::vector<std::pair<std::string, std::string>> metadata{{"format", "pt"}, {"note", "ünïcödé \"quoted\"\n"}};
    hf::write_safetensors(p, {hf::f32("h.0.w", w), hf::i64("ids", ids), hf::f64_scalar("step", step), hf::f32("empty", empty_rows)},
                          metadata);
    CHECK(dir.entries() == 1);  // no temporary left behind

    const auto f = hf::SafetensorsFile::open(p);
    CHECK(f.path() == p);
    CHECK(f.metadata() == metadata);
    REQUIRE(f.tensors().size() == 4);
    CHECK(f.tensors()[0].name == "h.0.w");  // header order, which is the written order
    CHECK(f.tensors()[1].name == "ids");
    CHECK(f.tensors()[2].name == "step");
    CHECK(f.tensors()[3].name == "empty");

    const hf::TensorInfo* t = f.find("h.0.w");
    REQUIRE(t);
    CHECK(t->dtype == hf::DType::F32);
    CHECK(t->shape == std::vector<std::size_t>{2, 3});
    CHECK(t->begin == 0);
    CHECK(t->end == 24);
    const Tensor w2 = f.read_float(*t);
    CHECK(w2.shape() == w.shape());
    CHECK(std::memcmp(w2.data(), w.data(), 24) == 0);

    const IdTensor ids2 = f.read_int(*f.find("ids"));
    CHECK(ids2 == ids);

    const hf::TensorInfo* s = f.find("step");
    REQUIRE(s);
    CHECK(s->dtype == hf::DType::F64);
    CHECK(s->shape.empty());
    REQUIRE(f.bytes(*s).size() == 8);
    CHECK(std::memcmp(f.bytes(*s).data(), &step, 8) == 0);
    CHECK(f.read_float(*s)() == 0.1f);  // rounded to nearest

    const Tensor e = f.read_float(*f.find("empty"));
    CHECK(e.shape() == Shape{0, 5});
    CHECK(f.find("missing") == nullptr);
    CHECK(f.find("h.0") == nullptr);
}

TEST_CASE("safetensors: the header is padded with spaces to a multiple of 8 bytes") {
    SafetensorsDir dir;
    const float x = 1.0f;
    for (std::size_t length = 1; length <= 9; ++length) {
        CAPTURE(length);
        const fs::path p = dir / "pad.safetensors";
        hf::write_safetensors(p, {{std::string(length, 'x'), hf::DType::F32, {}, std::as_bytes(std::span(&x, 1))}});
        const std::string file = read_text(p);
        std::uint64_t n = 0;
        std::memcpy(&n, file.data(), 8);
        CHECK(n % 8 == 0);
        REQUIRE(file.size() == 8 + n + 4);
        const std::string header = file.substr(8, n);
        CHECK(header.front() == '{');
        const std::size_t close = header.rfind('}');
        CHECK(n - (close + 1) < 8);  // fewer than 8 bytes of padding
        CHECK(header.find_first_not_of(' ', close + 1) == std::string::npos);
        CHECK(hf::SafetensorsFile::open(p).read_float(hf::TensorInfo{std::string(length, 'x'), hf::DType::F32, {}, 0, 4})() == 1.0f);
    }
}

TEST_CASE("safetensors: F16, BF16 and F64 decode to the hand-computed float") {
    SafetensorsDir dir;
    // F16: sign 1, exponent 5 (bias 15), mantissa 10. BF16: the top half of a float.
    const std::string f16 = bytes_of<std::uint16_t>({0x0000, 0x8000, 0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x8001, 0x3555,
                                                      0x7C00, 0xFC00, 0x7E00});
    const std::string bf16 = bytes_of<std::uint16_t>({0x3F80, 0xC040, 0x0001, 0x8000, 0x7F7F, 0x3EAB, 0x7F80, 0xFF80, 0x7FC0});
    const std::string f64 = bytes_of<double>({0.1, 1.0 + 0x1p-24, 1.0 + 0x1.8p-24, -0.0, 1e300, 0x1p-149, 0x1p-150});
    const fs::path p = dir.raw(R"({"h":{"dtype":"F16","shape":[13],"data_offsets":[0,26]},)"
                               R"("b":{"dtype":"BF16","shape":[9],"data_offsets":[26,44]},)"
                               R"("d":{"dtype":"F64","shape":[7],"data_offsets":[44,100]}})",
                               f16 + bf16 + f64);
    const auto f = hf::SafetensorsFile::open(p);

    const Tensor h = f.read_float(*f.find("h"));
    REQUIRE(h.size() == 13);
    CHECK(bits(h(0)) == bits(0.0f));
    CHECK(bits(h(1)) == bits(-0.0f));
    CHECK(h(2) == 1.0f);
    CHECK(h(3) == -2.0f);
    CHECK(h(4) == 65504.0f);           // largest finite
    CHECK(h(5) == 0x1p-24f);           // smallest subnormal
    CHECK(h(6) == 1023 * 0x1p-24f);    // largest subnormal
    CHECK(h(7) == 0x1p-14f);           // smallest normal
    CHECK(h(8) == -0x1p-24f);
    CHECK(h(9) == 0.333251953125f);    // 0x3555 = 1.0101010101b · 2^-2
    CHECK(h(10) == std::numeric_limits<float>::infinity());
    CHECK(h(11) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(h(12)));

    const Tensor b = f.read_float(*f.find("b"));
    REQUIRE(b.size() == 9);
    CHECK(b(0) == 1.0f);
    CHECK(b(1) == -3.0f);
    CHECK(b(2) == 0x1p-133f);          // smallest BF16 subnormal
    CHECK(bits(b(3)) == bits(-0.0f));
    CHECK(b(4) == 0x1.FEp127f);        // largest finite
    CHECK(b(5) == 0.333984375f);
    CHECK(b(6) == std::numeric_limits<float>::infinity());
    CHECK(b(7) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(b(8)));

    const Tensor d = f.read_float(*f.find("d"));
    REQUIRE(d.size() == 7);
    CHECK(d(0) == 0.1f);
    CHECK(d(1) == 1.0f);               // a tie rounds to even
    CHECK(d(2) == 1.0f + 0x1p-23f);    // above the tie rounds up
    CHECK(bits(d(3)) == bits(-0.0f));
    CHECK(d(4) == std::numeric_limits<float>::infinity());
    CHECK(d(5) == 0x1p-149f);
    CHECK(bits(d(6)) == bits(0.0f));   // half the smallest subnormal: a tie, to even (zero)
}

TEST_CASE("safetensors: integer dtypes widen to int64; wrong dtypes are refused by name") {
    SafetensorsDir dir;
    const fs::path p = dir.raw(R"({"i8":{"dtype":"I8","shape":[2],"data_offsets":[0,2]},)"
                               R"("u8":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},)"
                               R"("i16":{"dtype":"I16","shape":[1],"data_offsets":[4,6]},)"
                               R"("u16":{"dtype":"U16","shape":[1],"data_offsets":[6,8]},)"
                               R"("i32":{"dtype":"I32","shape":[1],"data_offsets":[8,12]},)"
                               R"("u32":{"dtype":"U32","shape":[1],"data_offsets":[12,16]},)"
                               R"("i64":{"dtype":"I64","shape":[1],"data_offsets":[16,24]},)"
                               R"("f":{"dtype":"F32","shape":[],"data_offsets":[24,28]},)"
                               R"("flags":{"dtype":"BOOL","shape":[4],"data_offsets":[28,32]}})",
                               bytes_of<std::int8_t>({-128, 127}) + bytes_of<std::uint8_t>({0, 255}) + bytes_of<std::int16_t>({-32768}) +
                                   bytes_of<std::uint16_t>({65535}) + bytes_of<std::int32_t>({std::numeric_limits<std::int32_t>::min()}) +
                                   bytes_of<std::uint32_t>({4294967295u}) + bytes_of<std::int64_t>({std::numeric_limits<std::int64_t>::min()}) +
                                   bytes_of<float>({2.5f}) + zeros(4));
    const auto f = hf::SafetensorsFile::open(p);
    CHECK(f.read_int(*f.find("i8")) == IdTensor{-128, 127});
    CHECK(f.read_int(*f.find("u8")) == IdTensor{0, 255});
    CHECK(f.read_int(*f.find("i16"))(0) == -32768);
    CHECK(f.read_int(*f.find("u16"))(0) == 65535);
    CHECK(f.read_int(*f.find("i32"))(0) == std::numeric_limits<std::int32_t>::min());
    CHECK(f.read_int(*f.find("u32"))(0) == 4294967295);
    CHECK(f.read_int(*f.find("i64"))(0) == std::numeric_limits<std::int64_t>::min());
    CHECK(f.read_float(*f.find("f"))() == 2.5f);

    const std::string where = p.string() + ": ";
    CHECK_THROWS_WITH_AS(f.read_float(*f.find("i64")),
                         (where + R"(tensor "i64": dtype I64 cannot be read as float (F32, F16, BF16 or F64 expected))").c_str(),
                         hf::FormatError);
    CHECK_THROWS_WITH_AS(f.read_int(*f.find("f")),
                         (where + R"(tensor "f": dtype F32 cannot be read as integers (I64, I32, I16, I8, U32, U16 or U8 expected))").c_str(),
                         hf::FormatError);
    CHECK_THROWS_WITH_AS(f.read_int(*f.find("flags")), doctest::Contains(R"(tensor "flags": dtype BOOL cannot be read as integers)"),
                         hf::FormatError);
    // A TensorInfo that does not describe this file is never trusted.
    const hf::TensorInfo foreign{"x", hf::DType::F32, {1000}, 0, 4000};
    CHECK_THROWS_WITH_AS(f.bytes(foreign), (where + R"(tensor "x": data_offsets [0, 4000] lie outside the data section (32 bytes))").c_str(),
                         hf::FormatError);
    const hf::TensorInfo inconsistent{"y", hf::DType::F32, {3}, 0, 8};
    CHECK_THROWS_WITH_AS(f.read_float(inconsistent), (where + R"(tensor "y": shape (3,) needs 12 bytes, data_offsets give 8)").c_str(),
                         hf::FormatError);
}

TEST_CASE("safetensors: valid edge cases open") {
    SafetensorsDir dir;
    SUBCASE("no tensors") { CHECK(hf::SafetensorsFile::open(dir.raw("{}")).tensors().empty()); }
    SUBCASE("metadata only, header padded") {
        const auto f = hf::SafetensorsFile::open(dir.raw(R"({"__metadata__":{"b":"2","a":"1"}}   )"));
        CHECK(f.tensors().empty());
        CHECK(f.metadata() == std::vector<std::pair<std::string, std::string>>{{"b", "2"}, {"a", "1"}});  // header order
    }
    SUBCASE("zero-sized tensors share an offset; tensors() keeps header order, not offset order") {
        const auto f = hf::SafetensorsFile::open(dir.raw(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                                                         R"("z":{"dtype":"I64","shape":[0,3],"data_offsets":[8,8]},)"
                                                         R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                         R"("e":{"dtype":"F16","shape":[4,0],"data_offsets":[16,16]}})",
                                                         zeros(16)));
        REQUIRE(f.tensors().size() == 4);
        CHECK(f.tensors()[0].name == "b");
        CHECK(f.tensors()[2].name == "a");
        CHECK(f.read_int(*f.find("z")).shape() == IdTensor::shape_type{0, 3});
        CHECK(f.read_float(*f.find("e")).size() == 0);
        CHECK(f.bytes(*f.find("e")).empty());
    }
    SUBCASE("a moved-from file gives up its mapping") {
        auto f = hf::SafetensorsFile::open(dir.raw("{" + a8 + "}", bytes_of<float>({1.5f, -2.0f})));
        hf::SafetensorsFile g = std::move(f);
        CHECK(g.read_float(*g.find("a")) == Tensor{1.5f, -2.0f});
        f = hf::SafetensorsFile::open(dir.raw("{}"));
        CHECK(f.tensors().empty());
    }
}

TEST_CASE("safetensors: malformed files are rejected with a message naming the problem") {
    SafetensorsDir dir;
    const std::string good = bytes_of<float>({1.0f, 2.0f});

    SUBCASE("length prefix") {
        CHECK_REJECTS_FILE("", "file is 0 bytes, too short for the 8-byte header length");
        CHECK_REJECTS_FILE("abcde", "file is 5 bytes, too short for the 8-byte header length");
        CHECK_REJECTS_FILE(le64(100) + "{}", "header length 100 runs past the end of the file (10 bytes)");
        CHECK_REJECTS_FILE(le64(100'000'000) + "{}", "header length 100000000 runs past the end of the file (10 bytes)");
        // Over the cap: rejected from the 8 bytes alone, never allocated (2^64 - 1 could not be).
        CHECK_REJECTS_FILE(le64(100'000'001), "header length 100000001 exceeds the 100000000-byte limit");
        CHECK_REJECTS_FILE(le64(~0ull) + "{}", "header length 18446744073709551615 exceeds the 100000000-byte limit");
    }
    SUBCASE("header text") {
        CHECK_REJECTS("", "", "header does not start with '{' (the top level must be a JSON object)");
        CHECK_REJECTS("[1, 2]", "", "header does not start with '{' (the top level must be a JSON object)");
        CHECK_REJECTS(R"("a")", "", "header does not start with '{' (the top level must be a JSON object)");
        CHECK_REJECTS(" {}", "", "header does not start with '{' (the top level must be a JSON object)");
        CHECK_REJECTS("{\"a\xff\": 1}", "", "header is not valid UTF-8 (byte 3 of the header)");
        CHECK_REJECTS("{\"\xc0\xaf\": 1}", "", "header is not valid UTF-8 (byte 2 of the header)");       // overlong '/'
        CHECK_REJECTS("{\"x\xed\xa0\x80\": 1}", "", "header is not valid UTF-8 (byte 3 of the header)");  // a surrogate
        CHECK_REJECTS(R"({"a": )", "",
                      "header: not valid JSON: parse error at line 1, column 7: syntax error while parsing value - unexpected end of "
                      "input; expected '[', '{', or a literal");
        CHECK_REJECTS("{} x", "",
                      "header: not valid JSON: parse error at line 1, column 4: syntax error while parsing value - invalid literal; last "
                      "read: '{} x'; expected end of input");
        // Padded with NUL instead of spaces (nlohmann-json alone would stop reading at the NUL).
        CHECK_REJECTS(std::string("{}\0\0 x", 6), "", "header: not valid JSON: NUL byte at offset 2");
        // Nesting far deeper than any header is refused while parsing: nothing deep enough to overflow
        // the stack is ever built.
        CHECK_REJECTS(R"({"a":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}", "", "header: nested deeper than 64 levels");
    }
    SUBCASE("duplicate keys, which nlohmann-json alone would silently merge") {
        CHECK_REJECTS("{" + a8 + "," + a8 + "}", good, R"(header: duplicate key "a")");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2],"dtype":"F32","data_offsets":[0,8]}})", good, R"(header: duplicate key "dtype" in a)");
        CHECK_REJECTS(R"({"__metadata__":{},"__metadata__":{}})", "", R"(header: duplicate key "__metadata__")");
        CHECK_REJECTS(R"({"__metadata__":{"k":"1","k":"2"}})", "", R"(header: duplicate key "k" in __metadata__)");
    }
    SUBCASE("metadata") {
        CHECK_REJECTS(R"({"__metadata__":{"k":1}})", "", R"(__metadata__: value of "k" is not a string)");
        CHECK_REJECTS(R"({"__metadata__":{"k":null}})", "", R"(__metadata__: value of "k" is not a string)");
        CHECK_REJECTS(R"({"__metadata__":["k"]})", "", "__metadata__ is not an object");
    }
    SUBCASE("entry fields") {
        CHECK_REJECTS(R"({"a":[]})", "", R"(tensor "a": entry is not an object)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2]}})", good, R"(tensor "a": missing "data_offsets")");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", good, R"(tensor "a": missing "shape")");
        CHECK_REJECTS(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", good, R"(tensor "a": missing "dtype")");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", good, R"(tensor "a": unexpected key "extra")");
    }
    SUBCASE("dtype") {
        CHECK_REJECTS(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", good, R"(tensor "a": unknown dtype "F33")");
        CHECK_REJECTS(R"({"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}})", good, R"(tensor "a": unknown dtype "f32")");
        CHECK_REJECTS(R"({"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", good, R"(tensor "a": unknown dtype 4)");
        CHECK_REJECTS(R"({"a":{"dtype":"F4","shape":[16],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": dtype "F4" packs elements into less than a byte, which is not supported)");
    }
    SUBCASE("shape") {
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2,-1],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": shape [2,-1] is not a list of non-negative integers)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": shape [2.0] is not a list of non-negative integers)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": shape [1.8446744073709552e+19] is not a list of non-negative integers)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": shape ["2"] is not a list of non-negative integers)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", good, R"(tensor "a": shape 2 is not a list of non-negative integers)");
    }
    SUBCASE("data_offsets") {
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}})", good,
                      R"(tensor "a": data_offsets [8] is not a pair of non-negative integers)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", good,
                      R"(tensor "a": data_offsets [-8,0] is not a pair of non-negative integers)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", good, R"(tensor "a": data_offsets [8, 0] end before they begin)");
    }
    SUBCASE("element count against the byte range") {
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", good, R"(tensor "a": shape (3,) needs 12 bytes, data_offsets give 8)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,8]}})", good, R"(tensor "a": shape () needs 4 bytes, data_offsets give 8)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[0,8]}})", good, R"(tensor "a": shape (0,) needs 0 bytes, data_offsets give 8)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": shape (4294967296, 4294967296) of F32 overflows the byte count)");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,8]}})", good,
                      R"(tensor "a": shape (4611686018427387904,) of F32 overflows the byte count)");
    }
    SUBCASE("layout of the data section") {
        CHECK_REJECTS("{" + a8 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", zeros(12),
                      R"(tensor "b": data_offsets [4, 12] overlap tensor "a" at [0, 8])");
        CHECK_REJECTS("{" + a8 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", zeros(8),
                      R"(tensor "b": data_offsets [0, 8] overlap tensor "a" at [0, 8])");
        CHECK_REJECTS("{" + a8 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", zeros(20),
                      R"(hole in the data section: bytes [8, 12) before tensor "b" belong to no tensor)");
        CHECK_REJECTS(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", zeros(12),
                      R"(hole in the data section: bytes [0, 4) before tensor "b" belong to no tensor)");
        CHECK_REJECTS("{" + a8 + "}", zeros(12), "4 trailing bytes after the last tensor (data section is 12 bytes, tensors end at 8)");
        CHECK_REJECTS("{}", "abc", "3 trailing bytes after the last tensor (data section is 3 bytes, tensors end at 0)");
        CHECK_REJECTS("{" + a8 + "}", zeros(4), R"(tensor "a": data_offsets [0, 8] run past the end of the data section (4 bytes))");
        CHECK_REJECTS(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551607,18446744073709551615]}})", good,
                      R"(tensor "a": data_offsets [18446744073709551607, 18446744073709551615] run past the end of the data section (8 bytes))");
    }
    SUBCASE("not a file") {
        const fs::path missing = dir / "missing.safetensors";
        CHECK_THROWS_WITH_AS(hf::SafetensorsFile::open(missing), (missing.string() + ": cannot read: No such file or directory").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(hf::SafetensorsFile::open(dir.path), (dir.path.string() + ": is a folder, expected a file").c_str(), hf::FormatError);
    }
}

TEST_CASE("safetensors: writing is atomic") {
    SafetensorsDir dir;
    const Tensor w{1.0f, 2.0f, 3.0f};

    SUBCASE("into a directory that does not exist: throws, creates nothing") {
        const fs::path p = dir / "absent" / "model.safetensors";
        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {hf::f32("w", w)}),
                             doctest::Contains((": cannot create \"" + p.string() + ".tmp-" + std::to_string(::getpid()) +
                                                "\": No such file or directory")
                                                   .c_str()),
                             hf::FormatError);
        CHECK_FALSE(fs::exists(dir / "absent"));
        CHECK(dir.entries() == 0);
    }
    SUBCASE("a rejected request leaves the previous file byte-identical") {
        const fs::path p = dir / "model.safetensors";
        hf::write_safetensors(p, {hf::f32("w", w)}, {{"version", "1"}});
        const std::string before = read_text(p);
        const Tensor other{4.0f, 5.0f, 6.0f};
        const double x = 1.0;
        const std::string where = p.string() + ": ";

        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {hf::f32("w", other), hf::f32("w", other)}), (where + R"(duplicate tensor name "w")").c_str(),
                             hf::FormatError);
        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {hf::f64_scalar("__metadata__", x)}),
                             (where + R"(tensor name "__metadata__" is reserved)").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {{"w", hf::DType::F32, {4}, std::as_bytes(std::span(other.data(), 3))}}),
                             (where + R"(tensor "w": shape (4,) needs 16 bytes, data has 12)").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {hf::f32("w", other)}, {{"k", "1"}, {"k", "2"}}),
                             (where + R"(duplicate metadata key "k")").c_str(), hf::FormatError);
        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {hf::f32("w\xff", other)}), (where + "the name of tensor 0 is not valid UTF-8").c_str(),
                             hf::FormatError);
        CHECK(read_text(p) == before);
        CHECK(dir.entries() == 1);
    }
    SUBCASE("a folder in the way is refused before a temporary is made") {
        const fs::path p = dir / "taken";
        fs::create_directories(p / "child");  // rename(2) could not replace it anyway
        CHECK_THROWS_WITH_AS(hf::write_safetensors(p, {hf::f32("w", w)}),
                             (p.string() + ": is a folder; only a regular file can be replaced").c_str(), hf::FormatError);
        CHECK(dir.entries() == 1);
        CHECK(fs::is_directory(p / "child"));
    }
    SUBCASE("a successful write replaces the previous file") {
        const fs::path p = dir / "model.safetensors";
        hf::write_safetensors(p, {hf::f32("w", w)});
        const Tensor other{4.0f, 5.0f};
        hf::write_safetensors(p, {hf::f32("v", other)});
        const auto f = hf::SafetensorsFile::open(p);
        REQUIRE(f.tensors().size() == 1);
        CHECK(f.read_float(f.tensors()[0]) == other);
        CHECK(dir.entries() == 1);
    }
}

TEST_CASE("safetensors: files from an independent writer read, and re-write byte-identically") {
    // The fixtures were written by tests/fixtures/make_model_fixtures.py (Python's json and struct).
    SafetensorsDir dir;
    for (const char* name : {"gpt2-tiny/model.safetensors", "gpt2-tiny-reference.safetensors", "bert-tiny/model.safetensors",
                             "bert-tiny-reference.safetensors"}) {
        CAPTURE(name);
        const fs::path original = fs::path(REMAT_FIXTURES) / name;
        const auto f = hf::SafetensorsFile::open(original);
        REQUIRE(!f.tensors().empty());
        std::vector<hf::WriteTensor> tensors;
        for (const auto& t : f.tensors()) {
            if (t.dtype == hf::DType::F32)
                CHECK(f.read_float(t).shape() == Shape(t.shape.begin(), t.shape.end()));
            else
                CHECK(f.read_int(t).size() * 8 == t.end - t.begin);
            tensors.push_back({t.name, t.dtype, t.shape, f.bytes(t)});
        }
        const fs::path copy = dir / "copy.safetensors";
        hf::write_safetensors(copy, tensors, f.metadata());
        CHECK(read_text(copy) == read_text(original));
    }
}

TEST_CASE("safetensors: corrupted files raise FormatError, never crash or read out of bounds") {
    // Deterministic mutations of a valid file: truncations, byte flips, and bytes overwritten with
    // JSON punctuation. Run under AddressSanitizer, this is the out-of-bounds check.
    SafetensorsDir dir;
    const Tensor w{1.0f, 2.0f, 3.0f, 4.0f};
    const IdTensor ids{7, 8};
    const double x = 0.5;
    const fs::path valid = dir / "valid.safetensors";
    hf::write_safetensors(valid, {hf::f32("w", w), hf::i64("ids", ids), hf::f64_scalar("x", x)}, {{"k", "v"}});
    const std::string original = read_text(valid);

    std::uint64_t state = 0x9E3779B97F4A7C15ull;  // splitmix64: the same cases on every platform
    auto next = [&] {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const std::string punctuation = std::string("{}[]\",:-0123456789 \xff") + '\0';
    std::size_t accepted = 0, rejected = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string bytes = original;
        switch (i % 3) {
            case 0: bytes.resize(next() % bytes.size()); break;
            case 1: bytes[next() % bytes.size()] ^= static_cast<char>(1u << (next() % 8)); break;
            default: bytes[next() % bytes.size()] = punctuation[next() % punctuation.size()]; break;
        }
        const fs::path p = dir.file(bytes, "mutant.safetensors");
        try {
            const auto f = hf::SafetensorsFile::open(p);
            for (const auto& t : f.tensors()) {
                if (t.dtype == hf::DType::F32 || t.dtype == hf::DType::F64 || t.dtype == hf::DType::F16 || t.dtype == hf::DType::BF16)
                    (void)f.read_float(t);
                else if (t.dtype == hf::DType::I64 || t.dtype == hf::DType::I32 || t.dtype == hf::DType::I16 || t.dtype == hf::DType::I8 ||
                         t.dtype == hf::DType::U8)
                    (void)f.read_int(t);
            }
            ++accepted;
        } catch (const hf::FormatError& e) {
            CHECK(std::string(e.what()).starts_with(p.string() + ": "));
            ++rejected;
        }
    }
    CHECK(accepted > 0);  // flips inside the data section or the padding are harmless
    CHECK(rejected > 0);
}
