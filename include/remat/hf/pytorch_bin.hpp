#pragma once
// pytorch_model.bin: the zip archive torch.save has written since PyTorch 1.6.
//   <root>/data.pkl     a pickle of the state dict: an OrderedDict of name -> tensor
//   <root>/data/<key>   each storage, raw little-endian, numel × element size bytes
//   <root>/version, and since PyTorch 2.1 <root>/byteorder ("little")
// A tensor in the pickle is torch._utils._rebuild_tensor_v2(storage, offset, size, stride, …), its
// storage a persistent id ('storage', torch.FloatStorage, key, location, numel); several tensors may
// view one storage (tied weights, slices, transposes).
//
// Pickles run code when Python loads them. This reader never does: data.pkl is interpreted by a
// restricted unpickler that knows only the opcodes a state dict needs and only these globals —
// collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and the
// typed torch.*Storage classes — and refuses everything else by name. It bounds the pickle's size,
// its nesting and its number of objects, and checks every tensor against its storage on open.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <filesystem>
#include <string_view>
#include <vector>

#include "remat/core/tensor.hpp"
#include "remat/hf/error.hpp"
#include "remat/hf/safetensors.hpp"

namespace remat::hf {

class PytorchBinFile {
public:
    // Reads the state dict and validates every tensor against its storage, and each storage's claims
    // (its size, where it lies) against the archive, without reading the storages: a tensor's
    // storage is read (and its CRC checked) when the tensor is. Throws FormatError naming the file and
    // the problem (the refused global, the opcode, the tensor, the storage) on any malformed input.
    static PytorchBinFile open(const std::filesystem::path& path);
    PytorchBinFile(PytorchBinFile&&) noexcept;
    PytorchBinFile& operator=(PytorchBinFile&&) noexcept;
    ~PytorchBinFile();

    const std::filesystem::path& path() const { return path_; }
    // In the state dict's order. begin/end are the bytes of its storage that the tensor spans (a
    // view need not be contiguous there), for information only.
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find(std::string_view name) const;  // nullptr if absent

    // Each tensor gathered into a fresh contiguous one (views and transposes are resolved here).
    // F32, F16, BF16, F64 -> float32; F16 and BF16 widen exactly, F64 rounds to nearest.
    Tensor read_float(const TensorInfo& t) const;
    // I64, I32, I16, I8, U8 -> int64.
    IdTensor read_int(const TensorInfo& t) const;

    // The limits that keep a hostile file from exhausting memory.
    static constexpr std::size_t max_pickle_bytes = std::size_t{64} << 20;
    static constexpr std::size_t max_pickle_objects = std::size_t{1} << 21;  // values, items, memo entries
    static constexpr std::size_t max_pickle_depth = 64;                      // nested MARKs
    static constexpr std::size_t max_dims = 64;

private:
    PytorchBinFile();
    struct Archive;  // the open zip archive (libzip), private to the reader
    struct Storage {
        std::uint64_t entry = 0;  // in the archive
        std::size_t bytes = 0;
        std::string key;
    };
    std::vector<std::byte> read_storage(std::size_t index) const;

    struct Layout {  // where a tensor's elements are: storage[offset + Σ index_i · stride_i]
        std::size_t storage = 0;
        std::size_t offset = 0;
        std::vector<std::size_t> stride;
    };
    std::size_t index_of(const TensorInfo& t) const;

    std::filesystem::path path_;
    std::unique_ptr<Archive> archive_;
    std::vector<Storage> storages_;
    std::vector<TensorInfo> tensors_;
    std::vector<Layout> layouts_;       // parallel to tensors_
    std::vector<std::size_t> by_name_;  // indices into tensors_, sorted by name
};

}  // namespace remat::hf
