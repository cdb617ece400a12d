#include "remat/core/memory_size.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "remat/core/error.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat {

namespace {
// Largest first, so that memory_size_text finds the shortest exact one; binary before decimal at a tie.
constexpr std::array<std::pair<const char*, double>, 9> units{{{"TiB", 1099511627776.0},
                                                              {"TB", 1e12},
                                                              {"GiB", 1073741824.0},
                                                              {"GB", 1e9},
                                                              {"MiB", 1048576.0},
                                                              {"MB", 1e6},
                                                              {"KiB", 1024.0},
                                                              {"KB", 1e3},
                                                              {"B", 1.0}}};

[[noreturn]] void refuse(const std::string& text, const std::string& why) {
    throw ValueError("memory size " + in_quotes(text) + ": " + why +
                     " (expected a number and a unit: B, KB, MB, GB, TB or KiB, MiB, GiB, TiB, as in 11GB or 4.5GiB)");
}
}  // namespace

std::size_t parse_memory_size(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    const std::string number = text.substr(0, i);
    if (number.empty() || number.find('.') != number.rfind('.') || number == ".") refuse(text, "no number");
    std::size_t u = i;
    if (u < text.size() && text[u] == ' ') ++u;
    const std::string unit = text.substr(u);
    double scale = 0;
    for (const auto& [name, value] : units)
        if (unit == name) scale = value;
    if (scale == 0) refuse(text, unit.empty() ? "no unit" : "unknown unit " + in_quotes(unit));
    const double bytes = std::floor(std::strtod(number.c_str(), nullptr) * scale);
    if (!(bytes < 9.2e18)) refuse(text, "too large");
    return static_cast<std::size_t>(bytes);
}

std::string memory_size_text(std::size_t bytes) {
    for (const auto& [name, value] : units) {
        const auto step = static_cast<std::size_t>(value);
        if (bytes > 0 && bytes % step == 0) return std::to_string(bytes / step) + name;
    }
    return std::to_string(bytes) + "B";
}

std::string readable_memory_size(std::size_t bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(units)) {
        v /= 1024;
        ++u;
    }
    char text[32];
    if (u == 0)
        std::snprintf(text, sizeof text, "%zu bytes", bytes);
    else
        std::snprintf(text, sizeof text, v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return text;
}

}  // namespace remat
