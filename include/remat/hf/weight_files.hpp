#pragma once
// The tensors of a HuggingFace model folder, whichever way they are stored: model.safetensors,
// sharded safetensors (model.safetensors.index.json), or pytorch_model.bin.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "remat/core/tensor.hpp"
#include "remat/hf/pytorch_bin.hpp"
#include "remat/hf/safetensors.hpp"

namespace remat::hf {

class WeightFiles {
public:
    // Opens and validates every weight file in `dir`; throws FormatError naming the
    // folder when it holds none, or the file (a missing shard, a malformed header) that is wrong.
    static WeightFiles open(const std::filesystem::path& dir);

    // Every tensor name, in file order (shards in index order).
    std::vector<std::string> names() const;
    const TensorInfo* find(const std::string& name) const;
    // What every tensor takes as float32: the most a model built for this checkpoint needs.
    std::size_t float32_bytes() const;
    std::size_t size() const { return order_.size(); }  // tensors
    // As float32 (parameters) or int64; the file is named in errors.
    Tensor read_float(const std::string& name) const;
    IdTensor read_int(const std::string& name) const;
    // "model.safetensors", "3 shards of model.safetensors.index.json", …, for messages.
    const std::string& description() const { return description_; }

    // model.safetensors.index.json is read whole; a larger one is refused (real ones are under 1 MB).
    static constexpr std::size_t max_index_bytes = std::size_t{64} << 20;

private:
    struct Located {
        const SafetensorsFile* file;
        const TensorInfo* info;
        const PytorchBinFile* bin = nullptr;  // instead of file, for pytorch_model.bin
    };
    Located locate(const std::string& name) const;

    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::unique_ptr<PytorchBinFile> bin_;  // set instead of files_ for pytorch_model.bin
    std::vector<std::string> order_;
    std::string description_;
};

}  // namespace remat::hf
