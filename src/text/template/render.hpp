#pragma once
// Runs a parsed template: statements write text, expressions evaluate with Python's semantics, and
// the limits (output size, steps, nested calls) stop a template that would not end.
#include <ctime>
#include <string>

#include "ast.hpp"
#include "remat/text/chat_template.hpp"

namespace remat::text::jinja {

std::string render(const Program& program, const Dict& variables, const RenderLimits& limits, const std::tm& now);

}  // namespace remat::text::jinja
