#include "remat/hf/safetensors.hpp"


#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "remat/core/files.hpp"
#include "src/core/guarded_read.hpp"
#include "src/core/strict_json.hpp"

#include "atomic_file.hpp"
#include "conversions.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::hf {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian: add byte swapping");

namespace {

using Json = nlohmann::ordered_json;  // keeps header order
namespace fs = std::filesystem;

constexpr std::uint64_t max_header_size = 100'000'000;  // the reference's MAX_HEADER_SIZE

// A problem with the file or the request, thrown without the path; the entry points add it.
struct Invalid : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------- dtypes

struct DTypeName {
    DType dtype;
    std::string_view name;
    std::size_t size;
};
constexpr std::array<DTypeName, 19> dtype_table{{
    {DType::F64, "F64", 8},         {DType::F32, "F32", 4},
    {DType::F16, "F16", 2},         {DType::BF16, "BF16", 2},
    {DType::I64, "I64", 8},         {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},         {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},           {DType::BOOL, "BOOL", 1},
    {DType::U64, "U64", 8},         {DType::U32, "U32", 4},
    {DType::U16, "U16", 2},         {DType::C64, "C64", 8},
    {DType::F8_E5M2, "F8_E5M2", 1}, {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::F8_E8M0, "F8_E8M0", 1}, {DType::F8_E4M3FNUZ, "F8_E4M3FNUZ", 1},
    {DType::F8_E5M2FNUZ, "F8_E5M2FNUZ", 1},
}};
// Defined by the format, but elements smaller than a byte cannot be addressed one by one.
constexpr std::array<std::string_view, 3> sub_byte_dtypes{"F4", "F6_E2M3", "F6_E3M2"};

const DTypeName& entry(DType dtype) {
    for (const auto& e : dtype_table)
        if (e.dtype == dtype) return e;
    throw ValueError("safetensors: invalid DType value " + std::to_string(static_cast<int>(dtype)));
}

std::optional<DType> parse_dtype(std::string_view s) {
    for (const auto& e : dtype_table)
        if (e.name == s) return e.dtype;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------- formatting

std::string tensor_label(std::string_view name) { return "tensor " + in_quotes(name); }
std::string range(std::size_t begin, std::size_t end) {
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}
// A JSON value for a message, cut short: a hostile header may hold megabytes in one value.
std::string excerpt(const Json& value) {
    std::string s = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}
std::string errno_message(int error) { return std::generic_category().message(error); }

// --------------------------------------------------------------------------------------- arithmetic

// Elements × dtype size, nullopt on overflow. Multiplies in order, as the reference does, so a shape
// whose prefix overflows is rejected even when a later dimension is 0.
std::optional<std::size_t> byte_count(const std::vector<std::size_t>& shape, std::size_t element_size) {
    std::size_t n = 1;
    for (std::size_t d : shape) {
        if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) return std::nullopt;
        n *= d;
    }
    if (n > std::numeric_limits<std::size_t>::max() / element_size) return std::nullopt;
    return n * element_size;
}

// ------------------------------------------------------------------------------------------- UTF-8

// Offset of the first byte that is not part of well-formed UTF-8 (no overlongs, no surrogates, at most
// U+10FFFF), or npos.
std::size_t invalid_utf8_at(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    auto continuation = [&](std::size_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
        return i < n && p[i] >= lo && p[i] <= hi;
    };
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        std::size_t length = 0;
        if (c < 0x80)
            length = 1;
        else if (c >= 0xC2 && c <= 0xDF)
            length = continuation(i + 1) ? 2 : 0;
        else if (c == 0xE0)
            length = continuation(i + 1, 0xA0) && continuation(i + 2) ? 3 : 0;
        else if (c == 0xED)
            length = continuation(i + 1, 0x80, 0x9F) && continuation(i + 2) ? 3 : 0;
        else if (c >= 0xE1 && c <= 0xEF)
            length = continuation(i + 1) && continuation(i + 2) ? 3 : 0;
        else if (c == 0xF0)
            length = continuation(i + 1, 0x90) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
        else if (c >= 0xF1 && c <= 0xF3)
            length = continuation(i + 1) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
        else if (c == 0xF4)
            length = continuation(i + 1, 0x80, 0x8F) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
        if (length == 0) return i;
        i += length;
    }
    return std::string_view::npos;
}

// ------------------------------------------------------------------------------------- JSON header

std::optional<std::size_t> as_size(const Json& v) {
    if (!v.is_number_unsigned()) return std::nullopt;  // negative integers are number_integer
    const auto u = v.get<std::uint64_t>();
    if (u > std::numeric_limits<std::size_t>::max()) return std::nullopt;
    return static_cast<std::size_t>(u);
}

// Checks one tensor entry on its own (dtype, shape, offsets, byte count, bounds).
TensorInfo parse_entry(const std::string& tensor_name, const Json& value, std::size_t data_size) {
    const std::string label = tensor_label(tensor_name);
    if (!value.is_object()) throw Invalid(label + ": entry is not an object");
    const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto& [k, v] : value.items()) {
        if (k == "dtype")
            dtype = &v;
        else if (k == "shape")
            shape = &v;
        else if (k == "data_offsets")
            offsets = &v;
        else
            throw Invalid(label + ": unexpected key " + in_quotes(k));
    }
    if (!dtype) throw Invalid(label + ": missing \"dtype\"");
    if (!shape) throw Invalid(label + ": missing \"shape\"");
    if (!offsets) throw Invalid(label + ": missing \"data_offsets\"");

    TensorInfo t{tensor_name, DType::F32, {}, 0, 0};
    std::optional<DType> parsed = dtype->is_string() ? parse_dtype(dtype->get_ref<const std::string&>()) : std::nullopt;
    if (!parsed) {
        if (dtype->is_string() && std::ranges::find(sub_byte_dtypes, dtype->get_ref<const std::string&>()) != sub_byte_dtypes.end())
            throw Invalid(label + ": dtype " + excerpt(*dtype) + " packs elements into less than a byte, which is not supported");
        throw Invalid(label + ": unknown dtype " + excerpt(*dtype));
    }
    t.dtype = *parsed;

    if (!shape->is_array()) throw Invalid(label + ": shape " + excerpt(*shape) + " is not a list of non-negative integers");
    for (const Json& d : *shape) {
        auto size = as_size(d);
        if (!size) throw Invalid(label + ": shape " + excerpt(*shape) + " is not a list of non-negative integers");
        t.shape.push_back(*size);
    }

    std::optional<std::size_t> begin, end;
    if (offsets->is_array() && offsets->size() == 2) begin = as_size((*offsets)[0]), end = as_size((*offsets)[1]);
    if (!begin || !end)
        throw Invalid(label + ": data_offsets " + excerpt(*offsets) + " is not a pair of non-negative integers");
    t.begin = *begin, t.end = *end;
    if (t.begin > t.end) throw Invalid(label + ": data_offsets " + range(t.begin, t.end) + " end before they begin");

    auto bytes = byte_count(t.shape, size_of(t.dtype));
    if (!bytes) throw Invalid(label + ": shape " + to_string(t.shape) + " of " + std::string(name(t.dtype)) + " overflows the byte count");
    if (*bytes != t.end - t.begin)
        throw Invalid(label + ": shape " + to_string(t.shape) + " needs " + std::to_string(*bytes) +
                                 " bytes, data_offsets give " + std::to_string(t.end - t.begin));
    if (t.end > data_size)
        throw Invalid(label + ": data_offsets " + range(t.begin, t.end) + " run past the end of the data section (" +
                                 std::to_string(data_size) + " bytes)");
    return t;
}

// The tensors, sorted by offset, must tile [0, data_size) exactly: no hole (a polyglot file could hide
// anything there), no overlap, nothing trailing.
void check_layout(const std::vector<TensorInfo>& tensors, std::size_t data_size) {
    std::vector<const TensorInfo*> sorted;
    for (const auto& t : tensors) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const TensorInfo* a, const TensorInfo* b) { return std::pair(a->begin, a->end) < std::pair(b->begin, b->end); });
    std::size_t covered = 0;
    const TensorInfo* last = nullptr;  // the tensor ending at `covered`
    for (const TensorInfo* t : sorted) {
        if (t->begin < covered)
            throw Invalid(tensor_label(t->name) + ": data_offsets " + range(t->begin, t->end) + " overlap " +
                                     tensor_label(last->name) + " at " + range(last->begin, last->end));
        if (t->begin > covered)
            throw Invalid("hole in the data section: bytes [" + std::to_string(covered) + ", " + std::to_string(t->begin) +
                          ") before " + tensor_label(t->name) + " belong to no tensor");
        if (t->end > covered || !last) last = t;
        covered = t->end;
    }
    if (covered != data_size)
        throw Invalid(std::to_string(data_size - covered) + " trailing bytes after the last tensor (data section is " +
                                 std::to_string(data_size) + " bytes, tensors end at " + std::to_string(covered) + ")");
}

struct Header {
    std::vector<TensorInfo> tensors;
    std::vector<std::pair<std::string, std::string>> metadata;
};

// Everything after the 8 length bytes. Problems are thrown as runtime_error without the path.
Header parse_header(std::string_view text, std::size_t data_size) {
    if (std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos)
        throw Invalid("header is not valid UTF-8 (byte " + std::to_string(bad) + " of the header)");
    if (!text.starts_with('{')) throw Invalid("header does not start with '{' (the top level must be a JSON object)");

    Json root;
    try {
        root = strict_json::parse<Json>(text, "header");  // NUL padding, duplicate names, deep nesting refused
    } catch (const FormatError& e) {
        throw Invalid(e.message());
    }

    Header h;
    for (const auto& [key, value] : root.items()) {
        if (key != "__metadata__") {
            h.tensors.push_back(parse_entry(key, value, data_size));
            continue;
        }
        if (!value.is_object()) throw Invalid("__metadata__ is not an object");
        for (const auto& [k, v] : value.items()) {
            if (!v.is_string()) throw Invalid("__metadata__: value of " + in_quotes(k) + " is not a string");
            h.metadata.emplace_back(k, v.get<std::string>());
        }
    }
    check_layout(h.tensors, data_size);
    return h;
}

// -------------------------------------------------------------------------------------- conversions

using detail::bfloat_to_float;
using detail::half_to_float;
using detail::load;
using detail::shaped;

// ------------------------------------------------------------------------------------------ writing

std::string build_header(const std::vector<WriteTensor>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata) {
    // Hand-assembled (ordered_json's operator[] is linear per key); Json(s).dump() escapes one string.
    auto string = [](const std::string& s) { return Json(s).dump(); };
    std::string h = "{";
    if (!metadata.empty()) {
        h += "\"__metadata__\":{";
        for (std::size_t i = 0; i < metadata.size(); ++i) {
            if (i) h += ',';
            h += string(metadata[i].first);
            h += ':';
            h += string(metadata[i].second);
        }
        h += "}";
    }
    std::size_t offset = 0;
    for (const auto& t : tensors) {
        if (h.size() > 1) h += ",";
        h += string(t.name) + ":{\"dtype\":\"" + std::string(name(t.dtype)) + "\",\"shape\":[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) {
            if (i) h += ',';
            h += std::to_string(t.shape[i]);
        }
        h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.data.size()) + "]}";
        offset += t.data.size();
    }
    h += "}";
    h.append((8 - h.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned
    return h;
}

// Everything that can be wrong with the request itself, checked before the file system is touched.
void check_request(const std::vector<WriteTensor>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata) {
    std::unordered_set<std::string_view> names, keys;
    std::size_t total = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const WriteTensor& t = tensors[i];
        if (invalid_utf8_at(t.name) != std::string_view::npos)
            throw Invalid("the name of tensor " + std::to_string(i) + " is not valid UTF-8");
        if (t.name == "__metadata__") throw Invalid("tensor name \"__metadata__\" is reserved");
        if (!names.insert(t.name).second) throw Invalid("duplicate tensor name " + in_quotes(t.name));
        entry(t.dtype);  // a valid enumerator
        auto bytes = byte_count(t.shape, size_of(t.dtype));
        if (!bytes) throw Invalid(tensor_label(t.name) + ": shape " + to_string(t.shape) + " overflows the byte count");
        if (*bytes != t.data.size())
            throw Invalid(tensor_label(t.name) + ": shape " + to_string(t.shape) + " needs " + std::to_string(*bytes) +
                                     " bytes, data has " + std::to_string(t.data.size()));
        if (total > std::numeric_limits<std::size_t>::max() - *bytes) throw Invalid("the data section overflows");
        total += *bytes;
    }
    for (std::size_t i = 0; i < metadata.size(); ++i) {
        const auto& [k, v] = metadata[i];
        if (invalid_utf8_at(k) != std::string_view::npos || invalid_utf8_at(v) != std::string_view::npos)
            throw Invalid("metadata entry " + std::to_string(i) + " is not valid UTF-8");
        if (!keys.insert(k).second) throw Invalid("duplicate metadata key " + in_quotes(k));
    }
}

}  // namespace

// ------------------------------------------------------------------------------------------- dtypes

std::string_view name(DType dtype) { return entry(dtype).name; }
std::size_t size_of(DType dtype) { return entry(dtype).size; }

// ------------------------------------------------------------------------------------------ reading

SafetensorsFile SafetensorsFile::open(const fs::path& path) {
    const std::string where = path.string() + ": ";
    const ReadableFile file = open_regular_file(path);  // a FIFO or a device is refused without blocking
    const auto file_size = static_cast<std::uint64_t>(file.size());
    if (file_size < 8) {
        throw FormatError(where + "file is " + std::to_string(file_size) + " bytes, too short for the 8-byte header length");
    }

    SafetensorsFile f;
    f.path_ = path;
    void* map = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
    const int map_error = errno;  // the mapping keeps the file alive once the descriptor closes
    if (map == MAP_FAILED) throw FormatError(where + "cannot map: " + errno_message(map_error));
    f.map_ = static_cast<const std::byte*>(map);
    f.map_size_ = file_size;  // from here on, f's destructor unmaps

    // Every read of the map is guarded: the file may be truncated while mapped (a SIGBUS otherwise).
    // The head is copied out first, so that parsing never touches the map.
    constexpr std::string_view lfs_pointer = "version https://git-lfs.github.com/spec/";
    std::string head(std::min<std::uint64_t>(file_size, std::max<std::size_t>(lfs_pointer.size(), 8)), '\0');
    f.copy_out(f.map_, head.data(), head.size());

    // A Git LFS pointer checked out in place of the weights is a common mistake: say so, rather than
    // report the text's first 8 bytes as an absurd header length.
    if (head.starts_with(lfs_pointer))
        throw FormatError(where + "a Git LFS pointer, not the tensors (fetch them with `git lfs pull`)");

    const auto n = load<std::uint64_t>(reinterpret_cast<const std::byte*>(head.data()));
    if (n > max_header_size)
        throw FormatError(where + "header length " + std::to_string(n) + " exceeds the " + std::to_string(max_header_size) + "-byte limit");
    if (n > file_size - 8)  // 8 + n would overflow for n near 2^64; the cap above already rules that out
        throw FormatError(where + "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(file_size) +
                          " bytes)");
    f.data_ = std::span(f.map_ + 8 + n, file_size - 8 - n);

    try {
        std::string header(n, '\0');
        f.copy_out(f.map_ + 8, header.data(), n);
        Header h = parse_header(header, f.data_.size());
        f.tensors_ = std::move(h.tensors);
        f.metadata_ = std::move(h.metadata);
    } catch (const Invalid& e) {
        throw FormatError(where + e.what());
    }
    f.by_name_.resize(f.tensors_.size());
    for (std::size_t i = 0; i < f.by_name_.size(); ++i) f.by_name_[i] = i;
    std::sort(f.by_name_.begin(), f.by_name_.end(), [&](std::size_t a, std::size_t b) { return f.tensors_[a].name < f.tensors_[b].name; });
    return f;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      data_(std::exchange(other.data_, {})),
      tensors_(std::move(other.tensors_)),
      by_name_(std::move(other.by_name_)),
      metadata_(std::move(other.metadata_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
    if (this != &other) {
        if (map_) ::munmap(const_cast<std::byte*>(map_), map_size_);
        path_ = std::move(other.path_);
        map_ = std::exchange(other.map_, nullptr);
        map_size_ = std::exchange(other.map_size_, 0);
        data_ = std::exchange(other.data_, {});
        tensors_ = std::move(other.tensors_);
        by_name_ = std::move(other.by_name_);
        metadata_ = std::move(other.metadata_);
    }
    return *this;
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) ::munmap(const_cast<std::byte*>(map_), map_size_);
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
    auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                               [&](std::size_t i, std::string_view n) { return std::string_view(tensors_[i].name) < n; });
    if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
    return &tensors_[*it];
}

void SafetensorsFile::copy_out(const std::byte* from, void* to, std::size_t n) const {
    guard({from, n}, [&] { std::memcpy(to, from, n); });
}

void SafetensorsFile::release(std::span<const std::byte> mapped) const {
    // Read once into a tensor, its pages need not stay in this process's resident set: loading a model
    // then peaks near the weights once, not twice (the pages stay in the page cache for a re-read).
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(mapped.data()) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(mapped.data()) + mapped.size()) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // advice: a failure changes nothing
}

template <class Read>
void SafetensorsFile::guard(std::span<const std::byte> mapped, Read&& read) const {
    if (mapped.empty() || remat::detail::guarded_read(mapped.data(), mapped.size(), read)) return;
    remat::detail::throw_shrank(path_, map_size_);
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorInfo& t) const {
    // t may be hand-made or come from another file: never trust it to lie within this one.
    if (t.begin > t.end || t.end > data_.size())
        throw FormatError(path_.string() + ": " + tensor_label(t.name) + ": data_offsets " + range(t.begin, t.end) +
                          " lie outside the data section (" + std::to_string(data_.size()) + " bytes)");
    return data_.subspan(t.begin, t.end - t.begin);
}

namespace {
// The bytes of t, checked against its dtype and shape, and the element count.
std::pair<std::span<const std::byte>, std::size_t> checked(const SafetensorsFile& f, const TensorInfo& t) {
    auto data = f.bytes(t);
    auto bytes = byte_count(t.shape, size_of(t.dtype));
    if (!bytes || *bytes != data.size())
        throw FormatError(f.path().string() + ": " + tensor_label(t.name) + ": shape " + to_string(t.shape) + " needs " +
                          (bytes ? std::to_string(*bytes) : std::string("too many")) + " bytes, data_offsets give " +
                          std::to_string(data.size()));
    return {data, data.size() / size_of(t.dtype)};
}

template <class From, class To, class Convert>
void convert(std::span<const std::byte> data, To* out, std::size_t count, Convert f) {
    for (std::size_t i = 0; i < count; ++i) out[i] = f(load<From>(data.data() + i * sizeof(From)));
}
}  // namespace

Tensor SafetensorsFile::read_float(const TensorInfo& t) const {
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16 && t.dtype != DType::F64)
        throw FormatError(path_.string() + ": " + tensor_label(t.name) + ": dtype " + std::string(name(t.dtype)) +
                          " cannot be read as float (F32, F16, BF16 or F64 expected)");
    const auto bytes_and_count = checked(*this, t);  // not a structured binding: clang 14 cannot capture one
    const std::span<const std::byte> data = bytes_and_count.first;
    const std::size_t count = bytes_and_count.second;
    Tensor out = shaped<Tensor>(t.shape);
    float* p = out.data();
    guard(data, [&] {
        switch (t.dtype) {
            case DType::F32:
                if (count) std::memcpy(p, data.data(), count * sizeof(float));
                break;
            case DType::F16: convert<std::uint16_t>(data, p, count, half_to_float); break;
            case DType::BF16: convert<std::uint16_t>(data, p, count, bfloat_to_float); break;
            default: convert<double>(data, p, count, [](double x) { return static_cast<float>(x); }); break;
        }
    });
    release(data);
    return out;
}

IdTensor SafetensorsFile::read_int(const TensorInfo& t) const {
    const DType d = t.dtype;
    if (d != DType::I64 && d != DType::I32 && d != DType::I16 && d != DType::I8 && d != DType::U32 && d != DType::U16 && d != DType::U8)
        throw FormatError(path_.string() + ": " + tensor_label(t.name) + ": dtype " + std::string(name(d)) +
                          " cannot be read as integers (I64, I32, I16, I8, U32, U16 or U8 expected)");
    const auto bytes_and_count = checked(*this, t);  // not a structured binding: clang 14 cannot capture one
    const std::span<const std::byte> data = bytes_and_count.first;
    const std::size_t count = bytes_and_count.second;
    IdTensor out = shaped<IdTensor>(t.shape);
    std::int64_t* p = out.data();
    auto widen = [](auto x) { return static_cast<std::int64_t>(x); };
    guard(data, [&] {
        switch (d) {
            case DType::I64: convert<std::int64_t>(data, p, count, widen); break;
            case DType::I32: convert<std::int32_t>(data, p, count, widen); break;
            case DType::I16: convert<std::int16_t>(data, p, count, widen); break;
            case DType::I8: convert<std::int8_t>(data, p, count, widen); break;
            case DType::U32: convert<std::uint32_t>(data, p, count, widen); break;
            case DType::U16: convert<std::uint16_t>(data, p, count, widen); break;
            default: convert<std::uint8_t>(data, p, count, widen); break;
        }
    });
    return out;
}

// ------------------------------------------------------------------------------------------ writing

WriteTensor f32(std::string name, const Tensor& t) {
    return {std::move(name), DType::F32, {t.shape().begin(), t.shape().end()}, std::as_bytes(std::span(t.data(), t.size()))};
}

WriteTensor i64(std::string name, const IdTensor& t) {
    return {std::move(name), DType::I64, {t.shape().begin(), t.shape().end()}, std::as_bytes(std::span(t.data(), t.size()))};
}

WriteTensor f64_scalar(std::string name, const double& value) {
    return {std::move(name), DType::F64, {}, std::as_bytes(std::span(&value, 1))};
}

namespace {
// The header of a valid request, or FormatError naming the target.
std::string checked_header(const fs::path& target, const std::vector<WriteTensor>& tensors,
                           const std::vector<std::pair<std::string, std::string>>& metadata) {
    try {
        check_request(tensors, metadata);
        std::string header = build_header(tensors, metadata);
        if (header.size() > max_header_size)
            throw Invalid("header is " + std::to_string(header.size()) + " bytes, over the " + std::to_string(max_header_size) +
                          "-byte limit");
        return header;
    } catch (const Invalid& e) {
        throw FormatError(target.string() + ": " + e.what());
    }
}

void write_checked(detail::AtomicFile& file, const std::string& header, const std::vector<WriteTensor>& tensors) {
    const auto n = static_cast<std::uint64_t>(header.size());
    file.write(std::as_bytes(std::span(&n, 1)));
    file.write(std::as_bytes(std::span(header)));
    for (const auto& t : tensors) file.write(t.data);
}
}  // namespace

namespace detail {

void write_safetensors(AtomicFile& file, const fs::path& target, const std::vector<WriteTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
    write_checked(file, checked_header(target, tensors, metadata), tensors);
}

}  // namespace detail

void write_safetensors(const fs::path& path, const std::vector<WriteTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
    const std::string header = checked_header(path, tensors, metadata);  // a rejected request touches no file
    detail::AtomicFile file(path);
    write_checked(file, header, tensors);
    file.commit();
}

}  // namespace remat::hf
