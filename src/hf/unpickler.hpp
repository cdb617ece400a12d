#pragma once
// The restricted unpickler of pytorch_model.bin's data.pkl (private to src/hf). It knows only the
// opcodes a state dict needs and only the globals remat/hf/pytorch_bin.hpp lists, refuses everything
// else by name, and bounds the pickle's nesting and number of objects (PytorchBinFile's limits).
// The pickle opcodes follow CPython's Lib/pickle.py; what torch writes follows torch/serialization.py
// (_save, _load) and torch/_tensor.py (__reduce_ex__) of PyTorch 1.13 and 2.x.
#include <zip.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "remat/hf/safetensors.hpp"

namespace remat::hf::detail {

// What the pickle can build. Containers live in arenas owned by the unpickler and are referred to by
// index, so a hostile pickle can make cycles (a list appended to itself) or deep nesting without any
// recursion or leak on our side.
enum class Kind : std::uint8_t { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor };

struct Value {
    Kind kind = Kind::None;
    std::int64_t i = 0;   // Bool, Int; Global: which one (unpickler.cpp); for a storage type, ref is its index
    double f = 0;         // Float
    std::uint32_t ref = 0;  // Str, Tuple, List, Dict, Storage, Tensor: index into its arena
};

// "None", "an int", "a tensor", …: for messages.
std::string_view kind_name(Kind k);

struct StorageRef {
    std::string key;
    DType dtype;
    std::string_view type_name;
    std::size_t numel;
    zip_uint64_t entry;
};
struct TensorSpec {
    std::uint32_t storage;
    std::size_t offset;
    std::vector<std::size_t> size, stride;
};

// A size or stride for a message: "(2, 3)", "(4,)", "()".
std::string list_string(const std::vector<std::size_t>& v);

// What data.pkl built: the value it stopped with, and the arenas every value refers into.
struct Pickle {
    Value top;
    std::vector<std::string> strings;
    std::vector<std::vector<Value>> seqs;
    std::vector<std::vector<std::pair<Value, Value>>> dicts;
    std::vector<StorageRef> storages;
    std::vector<TensorSpec> tensors;
};

// Runs `data`, the bytes of <root>/data.pkl in the archive `zip` of the file `file`, checking each
// storage it names against the archive as it goes. Throws FormatError "<file>: data.pkl at byte N: …"
// (or "<file>: …") on anything a state dict does not need.
Pickle unpickle(const std::string& file, const std::string& root, std::span<const std::byte> data, zip_t* zip,
               std::size_t archive_bytes);

}  // namespace remat::hf::detail
