#pragma once
// Memory sizes as people write them: "11GB", "4.5 GiB", "512MiB".
#include <cstddef>
#include <string>

namespace remat {

// A number (decimals allowed) and a unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024); a space between them is allowed. Rounds down to whole bytes. Anything else, or a
// size beyond 2^63 bytes, throws ValueError naming the text.
std::size_t parse_memory_size(const std::string& text);

// The shortest exact text parse_memory_size reads back: "11GB", "4608MiB", "123B".
std::string memory_size_text(std::size_t bytes);

// For people, rounded: "12.3 MiB", "640 KiB", "1.2 GiB", "512 bytes".
std::string readable_memory_size(std::size_t bytes);

}  // namespace remat
