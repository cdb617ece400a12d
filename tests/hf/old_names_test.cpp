// The names hf:: had before, kept as deprecated aliases so that user code still compiles: this file
// compiling is the test.
#include <type_traits>

#include "remat/hf/checkpoint_files.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(std::is_same_v<remat::hf::CheckpointFiles, remat::hf::WeightFiles>);
#pragma GCC diagnostic pop
