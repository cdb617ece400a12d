#pragma once
// Building a model from a config.json is bounded before it starts: a config whose sizes its checkpoint
// cannot justify (a vocabulary of 2^40, 10^5 layers over a 2-layer checkpoint) is refused after
// allocating little more than the checkpoint's tensors take — never terabytes, never the whole machine.
//
//   auto model = models::build_within(files, "gpt2/config.json", sizes, [&] { return gpt2::create(c, init); });
#include <array>
#include <cstddef>
#include <string>

#include "remat/core/error.hpp"
#include "remat/core/memory.hpp"
#include "remat/hf/weight_files.hpp"
#include "models/architecture.hpp"

namespace remat::models {

// What building a model for `files` may allocate: the tensors as float32, an eighth more and 16 MiB
// for buffers the checkpoint does not hold and the construction's temporaries.
std::size_t build_limit(const hf::WeightFiles& files);

// "n_layer 100000, n_embd 16, n_head 2, vocab_size 64, n_positions 16"
std::string sizes_text(const std::array<std::string, 5>& fields, const Sizes& sizes);

// The ValueError for a build that passed build_limit(files):
// "<config>: describes a model larger than <files> holds (building it passed <limit>; its <n> tensors
// take <bytes> as float32): check <sizes>".
ValueError larger_than_checkpoint(const hf::WeightFiles& files, const std::string& config, const std::string& sizes);

// build() under memory::AllocationLimit(build_limit(files)); an allocation over it is the ValueError above.
template <class Build>
auto build_within(const hf::WeightFiles& files, const std::string& config, const std::string& sizes, Build&& build) {
    try {
        memory::AllocationLimit limit(build_limit(files));
        return build();
    } catch (const memory::OverLimit&) {
        throw larger_than_checkpoint(files, config, sizes);
    }
}

}  // namespace remat::models
