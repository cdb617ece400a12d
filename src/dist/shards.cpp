#include "remat/dist/shards.hpp"

#include <algorithm>
#include <stdexcept>

namespace remat::dist {

std::vector<std::size_t> owners_by_elements(std::span<const std::size_t> sizes, std::size_t ranks) {
    if (ranks == 0) throw std::invalid_argument("dist::owners_by_elements: no ranks");
    std::size_t total = 0;
    for (std::size_t n : sizes) total += n;
    std::vector<std::size_t> owner(sizes.size(), 0);
    std::size_t before = 0;  // elements of the parameters before i
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (total > 0) {
            // The middle element's position times N over the total, in integers: 2·before + n < 2·total.
            const unsigned __int128 twice_middle = 2 * static_cast<unsigned __int128>(before) + sizes[i];
            const auto share = static_cast<std::size_t>(twice_middle * ranks / (2 * static_cast<unsigned __int128>(total)));
            owner[i] = std::min(share, ranks - 1);
        }
        before += sizes[i];
    }
    return owner;
}

}  // namespace remat::dist
