#pragma once
// Errors inside the template engine: EvalError has no position yet (the renderer adds the line and
// column of the expression it evaluated); Raised is raise_exception(), passed on with its own message.
#include <stdexcept>

#include "remat/text/chat_template.hpp"

namespace remat::text::jinja {

struct EvalError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Raised : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace remat::text::jinja
