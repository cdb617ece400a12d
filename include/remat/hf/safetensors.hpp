#pragma once
// The safetensors format (huggingface/safetensors): 8 bytes little-endian header length N, N bytes of
// JSON {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data section, every tensor C-order little-endian at [begin, end).
// Reading maps the file and validates it completely on open, mirroring the reference implementation
// (and a little stricter: no duplicate keys, no unknown keys in an entry, header starts with '{').
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "remat/core/tensor.hpp"
#include "remat/hf/error.hpp"

namespace remat::hf {

// The byte-sized dtypes of the format. Sub-byte ones (F4, F6_E2M3, F6_E3M2) are rejected on open.
enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, U64, U32, U16, C64, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ };
std::string_view name(DType dtype);  // "F32", as the header spells it
std::size_t size_of(DType dtype);    // bytes per element

struct TensorInfo {
    std::string name;
    DType dtype;
    std::vector<std::size_t> shape;
    std::size_t begin = 0, end = 0;  // byte range [begin, end) within the data section
};

// A read-only memory map of one file. Movable, not copyable; views from bytes() live as long as it.
class SafetensorsFile {
public:
    // Throws FormatError naming the file and the problem (and the tensor) on any malformed input.
    static SafetensorsFile open(const std::filesystem::path& path);

    SafetensorsFile(SafetensorsFile&& other) noexcept;
    SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;
    ~SafetensorsFile();

    const std::filesystem::path& path() const { return path_; }
    // In header order (the order the writer listed them).
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find(std::string_view name) const;  // nullptr if absent
    // "__metadata__" in header order; empty when absent.
    const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }

    // The raw little-endian bytes of t. t must describe a range of this file's data section. A view of
    // the map: reading it after the file was truncated faults (SIGBUS); read_float and read_int turn
    // that into a FormatError.
    std::span<const std::byte> bytes(const TensorInfo& t) const;
    // F32, F16, BF16, F64 -> float32 of shape t.shape. F16 and BF16 widen exactly; F64 rounds to nearest.
    Tensor read_float(const TensorInfo& t) const;
    // I64, I32, I16, I8, U32, U16, U8 -> int64 of shape t.shape.
    IdTensor read_int(const TensorInfo& t) const;

private:
    SafetensorsFile() = default;
    // read() of `mapped`, a part of the map; a file truncated meanwhile (SIGBUS) is a FormatError.
    template <class Read>
    void guard(std::span<const std::byte> mapped, Read&& read) const;
    void copy_out(const std::byte* from, void* to, std::size_t n) const;
    void release(std::span<const std::byte> mapped) const;  // drops read pages from the resident set

    std::filesystem::path path_;
    const std::byte* map_ = nullptr;  // the whole file
    std::size_t map_size_ = 0;
    std::span<const std::byte> data_;  // the data section, within map_
    std::vector<TensorInfo> tensors_;
    std::vector<std::size_t> by_name_;  // indices into tensors_, sorted by name, for find()
    std::vector<std::pair<std::string, std::string>> metadata_;
};

// A tensor to write: views bytes owned by the caller, which must outlive write_safetensors.
struct WriteTensor {
    std::string name;
    DType dtype;
    std::vector<std::size_t> shape;
    std::span<const std::byte> data;
};
// Views of a tensor's storage. The rvalue overloads are deleted: a view of a temporary would dangle.
WriteTensor f32(std::string name, const Tensor& t);
WriteTensor i64(std::string name, const IdTensor& t);
WriteTensor f64_scalar(std::string name, const double& value);  // shape [], F64
WriteTensor f32(std::string name, const Tensor&& t) = delete;
WriteTensor i64(std::string name, const IdTensor&& t) = delete;
WriteTensor f64_scalar(std::string name, const double&& value) = delete;

// Writes atomically: to "<path>.tmp-<pid>" in the same directory, fsync, rename over path. On any
// failure (FormatError) the temporary is removed and a previous file at path is untouched. Tensors are
// laid out in the given order; names must be unique; the header is padded with spaces to a multiple of
// 8 bytes; metadata goes under "__metadata__" when non-empty.
void write_safetensors(const std::filesystem::path& path, const std::vector<WriteTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace remat::hf
