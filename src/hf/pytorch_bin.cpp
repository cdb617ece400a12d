#include "remat/hf/pytorch_bin.hpp"

#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <system_error>
#include <unistd.h>
#include <optional>
#include <string>
#include <utility>

#include "conversions.hpp"
#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"
#include "unpickler.hpp"
#include "zip_archive.hpp"

// Opening the archive, unpickling its state dict (unpickler.cpp), checking every tensor against its
// storage, and gathering each tensor's elements from its storage into a contiguous one.

namespace remat::hf {

namespace fs = std::filesystem;

namespace {

using detail::bfloat_to_float;
using detail::half_to_float;
using detail::load;
using detail::shaped;
using detail::Kind;
using detail::kind_name;
using detail::list_string;
using detail::checked_entry_size;
using detail::read_entry;
using detail::StorageRef;
using detail::TensorSpec;
using detail::Zip;
using detail::zip_message;

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw FormatError(file + ": " + what); }

// torch.save's format before 1.6: pickles back to back, the first the magic number 0x1950a86a20f9469cfc6c
// (PROTO 2, LONG1 of 10 bytes).
bool legacy_format(const fs::path& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    unsigned char head[4] = {};
    const std::size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    return n == 4 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5 && head[2] == 0x8a && head[3] == 10;
}

// a + b and a · b, false on overflow.
bool add(std::size_t a, std::size_t b, std::size_t& out) { return !__builtin_add_overflow(a, b, &out); }
bool mul(std::size_t a, std::size_t b, std::size_t& out) { return !__builtin_mul_overflow(a, b, &out); }

}  // namespace

// --------------------------------------------------------------------------------------------- opening

struct PytorchBinFile::Archive {
    Zip zip;
    std::mutex reading;  // libzip's archive is not thread-safe
};

PytorchBinFile::PytorchBinFile() = default;
PytorchBinFile::PytorchBinFile(PytorchBinFile&&) noexcept = default;
PytorchBinFile& PytorchBinFile::operator=(PytorchBinFile&&) noexcept = default;
PytorchBinFile::~PytorchBinFile() = default;

PytorchBinFile PytorchBinFile::open(const fs::path& path) {
    const std::string file = path.string();
    // A FIFO or a device is refused without blocking; the archive's own claims are checked against
    // the size it really has.
    const ReadableFile opened = open_regular_file(path);
    const std::size_t archive_bytes = opened.size();
    const int fd = ::dup(opened.fd());
    if (fd < 0) throw FormatError(file + ": cannot read: " + std::generic_category().message(errno));
    int code = 0;
    Zip zip(zip_fdopen(fd, ZIP_CHECKCONS, &code));  // owns fd from here, when it succeeds
    if (!zip) {
        ::close(fd);
        if (code == ZIP_ER_NOZIP && legacy_format(path))
            throw FormatError(file + ": a torch.save file from before PyTorch 1.6 (a bare pickle, not a zip archive); "
                                     "re-save it with a newer PyTorch or convert it to model.safetensors");
        throw FormatError(file + ": not a readable zip archive (" + zip_message(code) + ")");
    }
    zip_t* z = zip.get();
    const zip_int64_t entries = zip_get_num_entries(z, 0);
    if (entries <= 0) throw FormatError(file + ": the archive is empty");
    // torch's reader takes the root folder from the first entry ("archive/…", or the saved file's stem).
    const char* first = zip_get_name(z, 0, ZIP_FL_ENC_RAW);
    const std::string first_name = first ? first : "";
    const std::size_t slash = first_name.find('/');
    if (slash == std::string::npos || slash == 0)
        throw FormatError(file + ": not a PyTorch archive (its first entry " + in_quotes(first_name) + " is not in a folder)");
    const std::string root = first_name.substr(0, slash);

    auto locate = [&](const std::string& name) -> std::optional<std::pair<zip_uint64_t, zip_uint64_t>> {
        const zip_int64_t i = zip_name_locate(z, name.c_str(), ZIP_FL_ENC_RAW);
        if (i < 0) return std::nullopt;
        const auto index = static_cast<zip_uint64_t>(i);
        return std::make_pair(index, checked_entry_size(z, index, archive_bytes, file + ": " + in_quotes(name)));
    };

    if (auto order = locate(root + "/byteorder")) {
        if (order->second > 16) throw FormatError(file + ": " + root + "/byteorder is not \"little\" or \"big\"");
        auto bytes = read_entry(z, order->first, static_cast<std::size_t>(order->second), file + ": " + root + "/byteorder");
        const std::string value(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        if (value != "little")
            throw FormatError(file + ": byte order " + in_quotes(value) + " is not supported (only \"little\")");
    }
    const std::string pickle_name = root + "/data.pkl";
    auto pickle_entry = locate(pickle_name);
    if (!pickle_entry) throw FormatError(file + ": not a PyTorch archive (no " + in_quotes(pickle_name) + ")");
    if (pickle_entry->second > max_pickle_bytes)
        throw FormatError(file + ": data.pkl is " + std::to_string(pickle_entry->second) + " bytes, over the " +
                          std::to_string(max_pickle_bytes) + "-byte limit");
    const auto pickle = read_entry(z, pickle_entry->first, static_cast<std::size_t>(pickle_entry->second), file + ": " + pickle_name);

    const detail::Pickle u = detail::unpickle(file, root, pickle, z, archive_bytes);
    if (u.top.kind != Kind::Dict)
        fail(file, "data.pkl holds " + std::string(kind_name(u.top.kind)) + ", not a state dict (a dict of tensors)");

    PytorchBinFile f;
    f.path_ = path;
    // Every storage a tensor uses, to read when one of its tensors is read.
    std::vector<std::size_t> storage_slot(u.storages.size(), std::numeric_limits<std::size_t>::max());
    for (const auto& [k, v] : u.dicts[u.top.ref]) {
        if (k.kind != Kind::Str) fail(file, "the state dict has a key that is " + std::string(kind_name(k.kind)) + ", not a string");
        const std::string& name = u.strings[k.ref];
        if (v.kind != Kind::Tensor)
            fail(file, "state dict entry " + in_quotes(name) + " is " + std::string(kind_name(v.kind)) + ", not a tensor");
        const TensorSpec& spec = u.tensors[v.ref];
        const StorageRef& s = u.storages[spec.storage];
        const std::size_t element = size_of(s.dtype);
        const std::string label = "tensor " + in_quotes(name);

        std::size_t numel = 1;
        for (std::size_t d : spec.size)
            if (!mul(numel, d, numel)) fail(file, label + ": size " + list_string(spec.size) + " overflows");
        // The last element it reaches: offset + Σ (size_i − 1) · stride_i, which must lie in the storage.
        std::size_t last = spec.offset;
        bool ok = true;
        if (numel > 0)
            for (std::size_t d = 0; d < spec.size.size(); ++d) {
                std::size_t step = 0;
                ok = ok && mul(spec.size[d] - 1, spec.stride[d], step) && add(last, step, last);
            }
        if (!ok || (numel > 0 && last >= s.numel) || (numel == 0 && spec.offset > s.numel))
            fail(file, label + ": size " + list_string(spec.size) + " with stride " + list_string(spec.stride) + " at offset " +
                   std::to_string(spec.offset) + " reaches past the end of its storage " + in_quotes(s.key) + " of " +
                   std::to_string(s.numel) + " elements");
        // A view may not hold more elements than its storage (a broadcast, stride-0 expansion): reading
        // it would let a tiny file demand unbounded memory.
        if (numel > s.numel)
            fail(file, label + ": size " + list_string(spec.size) + " has " + std::to_string(numel) + " elements, more than its storage " +
                   in_quotes(s.key) + " holds (" + std::to_string(s.numel) + "); broadcast views are not supported");

        if (storage_slot[spec.storage] == std::numeric_limits<std::size_t>::max()) {
            storage_slot[spec.storage] = f.storages_.size();
            f.storages_.push_back({s.entry, s.numel * element, s.key});  // read when a tensor of it is
        }
        TensorInfo info{name, s.dtype, spec.size, 0, 0};
        if (numel > 0) {
            info.begin = spec.offset * element;
            info.end = (last + 1) * element;
        }
        f.tensors_.push_back(std::move(info));
        f.layouts_.push_back({storage_slot[spec.storage], spec.offset, spec.stride});
    }
    f.by_name_.resize(f.tensors_.size());
    for (std::size_t i = 0; i < f.by_name_.size(); ++i) f.by_name_[i] = i;
    std::sort(f.by_name_.begin(), f.by_name_.end(),
              [&](std::size_t a, std::size_t b) { return f.tensors_[a].name < f.tensors_[b].name; });
    for (std::size_t i = 1; i < f.by_name_.size(); ++i)
        if (f.tensors_[f.by_name_[i]].name == f.tensors_[f.by_name_[i - 1]].name)
            fail(file, "tensor " + in_quotes(f.tensors_[f.by_name_[i]].name) + " appears twice in the state dict");
    f.archive_ = std::make_unique<Archive>();
    f.archive_->zip = std::move(zip);
    return f;
}

const TensorInfo* PytorchBinFile::find(std::string_view name) const {
    auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                               [&](std::size_t i, std::string_view n) { return tensors_[i].name < n; });
    if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
    return &tensors_[*it];
}

std::size_t PytorchBinFile::index_of(const TensorInfo& t) const {
    const TensorInfo* mine = find(t.name);
    if (!mine || mine->dtype != t.dtype || mine->shape != t.shape)
        throw FormatError(path_.string() + ": no tensor " + in_quotes(t.name) + " of that dtype and shape");
    return static_cast<std::size_t>(mine - tensors_.data());
}

// ---------------------------------------------------------------------------------------------- reading

std::vector<std::byte> PytorchBinFile::read_storage(std::size_t index) const {
    const Storage& s = storages_[index];
    std::lock_guard lock(archive_->reading);
    return read_entry(archive_->zip.get(), s.entry, s.bytes, path_.string() + ": storage " + in_quotes(s.key));
}

namespace {
// out[i] = f(element i of the view, in C order). Every position was bounds-checked on open.
template <class From, class To, class F>
void gather(const std::vector<std::byte>& storage, std::size_t offset, const std::vector<std::size_t>& size,
            const std::vector<std::size_t>& stride, To* out, F f) {
    std::size_t n = 1;
    for (std::size_t d : size) n *= d;
    if (n == 0) return;
    const std::byte* base = storage.data();
    if (size.empty()) {
        out[0] = f(load<From>(base + offset * sizeof(From)));
        return;
    }
    const std::size_t inner = size.size() - 1, count = size[inner], step = stride[inner];
    std::vector<std::size_t> index(size.size(), 0);
    std::size_t pos = offset;
    for (std::size_t done = 0; done < n; done += count) {
        for (std::size_t j = 0; j < count; ++j) out[done + j] = f(load<From>(base + (pos + j * step) * sizeof(From)));
        for (std::size_t d = inner; d-- > 0;) {  // advance the outer dimensions like an odometer
            pos += stride[d];
            if (++index[d] < size[d]) break;
            pos -= stride[d] * size[d];
            index[d] = 0;
        }
    }
}

}  // namespace

Tensor PytorchBinFile::read_float(const TensorInfo& t) const {
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16 && t.dtype != DType::F64)
        throw FormatError(path_.string() + ": tensor " + in_quotes(t.name) + ": dtype " + std::string(name(t.dtype)) +
                          " cannot be read as float (F32, F16, BF16 or F64 expected)");
    const std::size_t i = index_of(t);
    const Layout& l = layouts_[i];
    const std::vector<std::byte> s = read_storage(l.storage);
    Tensor out = shaped<Tensor>(t.shape);
    float* p = out.data();
    auto same = [](float x) { return x; };
    switch (t.dtype) {
        case DType::F32: gather<float>(s, l.offset, t.shape, l.stride, p, same); break;
        case DType::F16: gather<std::uint16_t>(s, l.offset, t.shape, l.stride, p, half_to_float); break;
        case DType::BF16: gather<std::uint16_t>(s, l.offset, t.shape, l.stride, p, bfloat_to_float); break;
        default: gather<double>(s, l.offset, t.shape, l.stride, p, [](double x) { return static_cast<float>(x); }); break;
    }
    return out;
}

IdTensor PytorchBinFile::read_int(const TensorInfo& t) const {
    const DType d = t.dtype;
    if (d != DType::I64 && d != DType::I32 && d != DType::I16 && d != DType::I8 && d != DType::U8)
        throw FormatError(path_.string() + ": tensor " + in_quotes(t.name) + ": dtype " + std::string(name(d)) +
                          " cannot be read as integers (I64, I32, I16, I8 or U8 expected)");
    const std::size_t i = index_of(t);
    const Layout& l = layouts_[i];
    const std::vector<std::byte> s = read_storage(l.storage);
    IdTensor out = shaped<IdTensor>(t.shape);
    std::int64_t* p = out.data();
    auto widen = [](auto x) { return static_cast<std::int64_t>(x); };
    switch (d) {
        case DType::I64: gather<std::int64_t>(s, l.offset, t.shape, l.stride, p, widen); break;
        case DType::I32: gather<std::int32_t>(s, l.offset, t.shape, l.stride, p, widen); break;
        case DType::I16: gather<std::int16_t>(s, l.offset, t.shape, l.stride, p, widen); break;
        case DType::I8: gather<std::int8_t>(s, l.offset, t.shape, l.stride, p, widen); break;
        default: gather<std::uint8_t>(s, l.offset, t.shape, l.stride, p, widen); break;
    }
    return out;
}

}  // namespace remat::hf
