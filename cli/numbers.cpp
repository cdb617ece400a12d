#include "cli/numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "cli/errors.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::cli {

std::int64_t largest_count(const std::string& option) {
    // Far above any real run, low enough that an absurd value is refused at once instead of running
    // until killed, and that no product of them overflows (docs/cli.md, "Limits").
    static const std::map<std::string, std::int64_t> largest = {
        {"--steps", 10'000'000'000},        {"--epochs", 1'000'000},         {"--warmup", 10'000'000'000},
        {"--validate-every", 10'000'000'000}, {"--save-every", 10'000'000'000}, {"--log-every", 10'000'000'000},
        {"--keep", 1'000'000},              {"--repeat", 1'000'000},         {"--rounds", 100},
        {"--batch", 1 << 20},               {"--accumulate", 1 << 20},       {"--seq", 1 << 24},
        {"--valid-windows", std::int64_t{1} << 40}, {"--valid-docs", std::int64_t{1} << 40},
        {"--n-layer", 1 << 24},             {"--n-embd", 1 << 24},           {"--n-head", 1 << 24},
        {"--vocab-size", 1 << 24},          {"--n-positions", 1 << 24},
        {"--max-new-tokens", 1 << 24},      {"--top-k", 1 << 24},            {"--lora r", 1 << 14}};
    const auto it = largest.find(option);
    return it == largest.end() ? std::numeric_limits<std::int64_t>::max() : it->second;
}

std::int64_t parse_count(const std::string& option, const std::string& text, std::int64_t minimum) {
    const std::int64_t maximum = largest_count(option);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < minimum || value > maximum)
        throw Failure(option + " must be a whole number " +
                      (maximum == std::numeric_limits<std::int64_t>::max()
                           ? "of at least " + std::to_string(minimum)
                           : "from " + std::to_string(minimum) + " to " + std::to_string(maximum)) +
                      ", got \"" + printable(text, 80) + "\"");
    return value;
}

float parse_number(const std::string& option, const std::string& text, float minimum, bool exclusive) {
    float value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool in_range = exclusive ? value > minimum : value >= minimum;
    if (error == std::errc::result_out_of_range)  // 1e300, 1e-300: not the reason below
        throw Failure(option + " " + text + " is out of the range of a 32-bit float (about 1e-45 to 3.4e38)");
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
