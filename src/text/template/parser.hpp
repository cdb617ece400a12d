#pragma once
// Tokens -> the program, by jinja2's grammar for the statements and expressions chat templates use.
#include <string_view>

#include "ast.hpp"

namespace remat::text::jinja {

Program parse(std::string_view source);

}  // namespace remat::text::jinja
