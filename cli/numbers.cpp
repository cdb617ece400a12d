#include "cli/numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "cli/errors.hpp"

namespace remat::cli {

std::int64_t parse_count(const std::string& option, const std::string& text, std::int64_t minimum) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < minimum)
        throw Failure(option + " must be a whole number of at least " + std::to_string(minimum) + ", got \"" + text +
                      "\"");
    return value;
}

float parse_number(const std::string& option, const std::string& text, float minimum, bool exclusive) {
    float value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool in_range = exclusive ? value > minimum : value >= minimum;
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || !in_range) {
        char bound[32];
        std::snprintf(bound, sizeof bound, "%g", static_cast<double>(minimum));
        throw Failure(option + " must be a number " + (exclusive ? "above " : "of at least ") + bound + ", got \"" +
                      text + "\"");
    }
    return value;
}

std::string shortest_text(float value) {
    char text[32];
    return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

Policy parse_policy(const std::string& spec) {
    try {
        return Policy::parse(spec);
    } catch (const Error& e) {
        throw Failure("--checkpoint: " + e.message());
    }
}

}  // namespace remat::cli
