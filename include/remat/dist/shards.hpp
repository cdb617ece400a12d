#pragma once
// ZeRO-1's division of the optimiser (docs/distributed.md, "Sharding the optimiser state"): each rank
// keeps AdamW's moments and does the update for its own share of the parameters only, receives only
// their summed gradients, and sends the updated values to the other ranks.
//
//   std::vector<std::size_t> owner = dist::owners_by_elements(sizes, world.size());   // per parameter
//
// A share is a run of whole parameters in parameters() order, so every rank's state file names whole
// tensors (loadable on any rank count) and a gradient norm is a sum of whole tensors' squares.
#include <cstddef>
#include <span>
#include <vector>

namespace remat::dist {

// The rank that owns each parameter: parameter i goes to the rank in whose equal share of all the
// elements its middle element lies (sizes[i] elements; 0 for a frozen one, which no rank needs), so
// shares are contiguous and as even as whole tensors allow. Fixed by the sizes and the rank count.
std::vector<std::size_t> owners_by_elements(std::span<const std::size_t> sizes, std::size_t ranks);

}  // namespace remat::dist
