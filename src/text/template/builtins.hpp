#pragma once
// What templates call: filters (x | trim), tests (x is defined), the methods of strings and dicts
// (x.strip(), m.items()) and the global functions (range, namespace, raise_exception, strftime_now).
// Each throws EvalError for a wrong argument and names what it got.
#include <ctime>
#include <functional>
#include <string>

#include "value.hpp"

namespace remat::text::jinja {

// Calls a filter or test by name from map/select/selectattr; supplied by the renderer.
struct Builtins {
    std::function<Value(const std::string& filter, Value subject, Arguments& args)> filter;
    std::function<bool(const std::string& test, const Value& subject, Arguments& args)> test;
};

Value apply_filter(const std::string& name, Value subject, Arguments& args, const Builtins& builtins);
bool apply_test(const std::string& name, const Value& subject, Arguments& args);
// The bound method `name` of a string, dict or list, or undefined when it has none by that name.
Value method(const Value& subject, const std::string& name);
// A global function, or undefined.
Value global(const std::string& name, const std::tm& now);

// Python's str.strip family and the whitespace it strips.
std::string strip(const std::string& s, const Value& chars, bool left, bool right);

}  // namespace remat::text::jinja
