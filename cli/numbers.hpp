#pragma once
// Option values read strictly, failures naming the option: CLI11 would silently clamp an overflowing integer, and "1e-3x" or
// "nan" must not become a learning rate. Failures name the option: "--steps must be a whole number
// of at least 1, got \"0\"".
#include <cstdint>
#include <string>

#include "remat/checkpoint.hpp"

namespace remat::cli {

// A whole number from minimum to largest_count(option).
std::int64_t parse_count(const std::string& option, const std::string& text, std::int64_t minimum);
// The bound of a count option: --steps 10^10, --repeat 10^6, --batch 2^20, --seq 2^24, … (no bound:
// the largest int64).
std::int64_t largest_count(const std::string& option);
// A finite number >= minimum (> minimum when `exclusive`).
float parse_number(const std::string& option, const std::string& text, float minimum, bool exclusive);
// The shortest decimal that reads back as the same float: "0.003", "5e-05".
std::string shortest_text(float value);
// --checkpoint's value, a Policy::parse spec: "--checkpoint: unknown checkpoint policy 'most' (…)".
Policy parse_policy(const std::string& spec);

}  // namespace remat::cli
