#pragma once
// The IN file of `remat run`: input_ids (I64, (B, T)) and optional attention_mask, token_type_ids and
// labels (I64, (B, T) each), validated against the model before anything runs.
#include <filesystem>
#include <optional>

#include "remat/data/dataset.hpp"

namespace remat::cli {

// What the model accepts.
struct InputLimits {
    std::size_t vocab_size;
    std::size_t max_positions;    // n_positions / max_position_embeddings
    std::size_t type_vocab_size;  // 0: the model takes no token_type_ids
};

// Throws Failure naming the file and the tensor: a missing input_ids, a dtype other than I64, a shape
// other than input_ids' (B, T), a token id, token type or label out of range (labels may be -100),
// a mask value other than 0 or 1. Tensors that are not inputs are reported by `unused`. The batch
// holds the tensors the file has, by name.
data::Batch read_batch(const std::filesystem::path& path, const InputLimits& limits, std::vector<std::string>& unused);

}  // namespace remat::cli
