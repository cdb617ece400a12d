// libFuzzer target: pytorch_model.bin through PytorchBinFile::open (libzip, then the restricted
// unpickler and the tensor layout checks), then every tensor it accepts. Two input forms, chosen by
// the first byte, so that mutations reach the unpickler instead of dying on the zip's CRCs:
//   0x00 <bytes>      the bytes are the file itself (a zip archive, or anything else)
//   other <entries>   the entries of an archive that this target zips (stored, correct CRCs):
//                     repeated { u16 name length, name, u32 data length, data }, little-endian; a
//                     truncated last entry keeps what is there
// Any exception other than hf::FormatError is a finding. Seeds: corpus/pytorch_bin/ (make_seeds.py).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "remat/hf/pytorch_bin.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;

namespace {

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
    static const auto table = [] {
        std::vector<std::uint32_t> t(256);
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void put(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

struct Entry {
    std::string name;
    const std::uint8_t* data;
    std::size_t size;
};

std::vector<Entry> entries(const std::uint8_t* p, std::size_t n) {
    std::vector<Entry> out;
    std::size_t i = 0;
    while (i + 2 <= n) {
        std::size_t name_size = p[i] | static_cast<std::size_t>(p[i + 1]) << 8;
        i += 2;
        name_size = std::min(name_size, n - i);
        std::string name(reinterpret_cast<const char*>(p + i), name_size);
        i += name_size;
        std::size_t data_size = 0;
        for (int k = 0; k < 4 && i < n; ++k) data_size |= static_cast<std::size_t>(p[i++]) << (8 * k);
        data_size = std::min(data_size, n - i);
        out.push_back({std::move(name), p + i, data_size});
        i += data_size;
    }
    return out;
}

// A zip archive of the entries, uncompressed, as torch.save writes it (minus its alignment padding).
std::vector<std::uint8_t> zip(const std::vector<Entry>& files) {
    std::vector<std::uint8_t> out, directory;
    for (const Entry& e : files) {
        const std::uint32_t crc = crc32(e.data, e.size);
        const std::size_t offset = out.size();
        put(out, 0x04034b50, 4);  // local file header
        put(out, 20, 2);          // version needed
        put(out, 0, 2);           // flags
        put(out, 0, 2);           // stored
        put(out, 0, 2);           // time
        put(out, 0x21, 2);        // date: 1980-01-01
        put(out, crc, 4);
        put(out, e.size, 4);
        put(out, e.size, 4);
        put(out, e.name.size(), 2);
        put(out, 0, 2);  // extra field length
        out.insert(out.end(), e.name.begin(), e.name.end());
        out.insert(out.end(), e.data, e.data + e.size);

        put(directory, 0x02014b50, 4);  // central directory header
        put(directory, 20, 2);          // made by
        put(directory, 20, 2);          // needed
        put(directory, 0, 2);
        put(directory, 0, 2);
        put(directory, 0, 2);
        put(directory, 0x21, 2);
        put(directory, crc, 4);
        put(directory, e.size, 4);
        put(directory, e.size, 4);
        put(directory, e.name.size(), 2);
        put(directory, 0, 2);  // extra
        put(directory, 0, 2);  // comment
        put(directory, 0, 2);  // disk
        put(directory, 0, 2);  // internal attributes
        put(directory, 0, 4);  // external attributes
        put(directory, offset, 4);
        directory.insert(directory.end(), e.name.begin(), e.name.end());
    }
    const std::size_t directory_offset = out.size();
    out.insert(out.end(), directory.begin(), directory.end());
    put(out, 0x06054b50, 4);  // end of central directory
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, files.size(), 2);
    put(out, files.size(), 2);
    put(out, directory.size(), 4);
    put(out, directory_offset, 4);
    put(out, 0, 2);
    return out;
}

bool is_float(hf::DType d) { return d == hf::DType::F32 || d == hf::DType::F16 || d == hf::DType::BF16 || d == hf::DType::F64; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static fuzz::MemoryFile file;
    std::vector<std::uint8_t> archive;
    const std::string* path;
    if (size == 0 || data[0] == 0) {
        path = &file.hold(size ? data + 1 : data, size ? size - 1 : 0);
    } else {
        archive = zip(entries(data + 1, size - 1));
        path = &file.hold(archive.data(), archive.size());
    }
    try {
        const auto bin = hf::PytorchBinFile::open(*path);
        for (const hf::TensorInfo& t : bin.tensors()) {
            if (bin.find(t.name) != &t) __builtin_trap();
            if (is_float(t.dtype)) {
                const Tensor x = bin.read_float(t);
                if (x.shape() != Shape(t.shape.begin(), t.shape.end())) __builtin_trap();
            } else if (t.dtype != hf::DType::BOOL) {
                const IdTensor x = bin.read_int(t);
                if (x.shape() != Shape(t.shape.begin(), t.shape.end())) __builtin_trap();
            }
        }
    } catch (const hf::FormatError&) {
    }
    return 0;
}
