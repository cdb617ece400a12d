#pragma once
// A value of the template language, with Python's semantics as jinja2 gives them: what is true, how
// values print ("None", "True", 1.0), compare and add. Lists and dicts are shared, as Python's are;
// dicts keep their insertion order (the order of the JSON they came from).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace remat::text::jinja {

struct Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;

// Arguments of a call: positional, then keyword.
struct Arguments {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
};
using Function = std::function<Value(Arguments&)>;

struct Value {
    // undefined: a name or key that does not exist — prints as "", is false, iterates as empty, and
    // fails on any other use (jinja2's Undefined). name_space: namespace(), a dict `set` may assign into.
    enum class Kind { undefined, none, boolean, integer, floating, string, list, dict, name_space, function };
    Kind kind = Kind::undefined;
    bool boolean = false;
    std::int64_t integer = 0;
    double floating = 0;
    std::string string;                  // the string, or what an undefined value was called
    std::shared_ptr<List> list;
    std::shared_ptr<Dict> dict;          // dict and name_space
    std::shared_ptr<const Function> function;

    static Value undefined(std::string name = {}) { return make(Kind::undefined, [&](Value& v) { v.string = std::move(name); }); }
    static Value none() { return make(Kind::none, [](Value&) {}); }
    static Value of(bool b) { return make(Kind::boolean, [&](Value& v) { v.boolean = b; }); }
    static Value of(std::int64_t i) { return make(Kind::integer, [&](Value& v) { v.integer = i; }); }
    static Value of(double d) { return make(Kind::floating, [&](Value& v) { v.floating = d; }); }
    static Value of(std::string s) { return make(Kind::string, [&](Value& v) { v.string = std::move(s); }); }
    static Value of(List l) { return make(Kind::list, [&](Value& v) { v.list = std::make_shared<List>(std::move(l)); }); }
    static Value of(Dict d, Kind kind = Kind::dict) {
        return make(kind, [&](Value& v) { v.dict = std::make_shared<Dict>(std::move(d)); });
    }
    static Value of(Function f) {
        return make(Kind::function, [&](Value& v) { v.function = std::make_shared<const Function>(std::move(f)); });
    }
    static Value from_json(const nlohmann::ordered_json& j);

    bool is_undefined() const { return kind == Kind::undefined; }
    bool is_number() const { return kind == Kind::integer || kind == Kind::floating || kind == Kind::boolean; }
    bool is_mapping() const { return kind == Kind::dict || kind == Kind::name_space; }
    double number() const { return kind == Kind::floating ? floating : static_cast<double>(kind == Kind::boolean ? boolean : integer); }
    // The key's value in a dict or namespace, or null.
    const Value* find(const std::string& key) const;

private:
    template <class Set>
    static Value make(Kind kind, Set&& set) {
        Value v;
        v.kind = kind;
        set(v);
        return v;
    }
};

// Python's bool(value).
bool truthy(const Value& v);
// Python's str(value): what {{ value }} prints ("" for undefined).
std::string to_string(const Value& v);
// Python's repr(value), as str() shows the items of a list or dict.
std::string repr(const Value& v);
// json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=False) — HF's tojson; indent < 0: none.
std::string to_json(const Value& v, int indent);
// Python's ==, and < for the orderable pairs (numbers, strings, lists); other pairs throw.
bool equal(const Value& a, const Value& b);
bool less(const Value& a, const Value& b);
// A type name for messages: "string", "list", "dict", "undefined value 'x'" …
std::string describe(const Value& v);

// The largest string (bytes) and list (items) an operation may make: a template that doubles a value in
// a loop stops with an error instead of taking the memory.
inline constexpr std::size_t max_value_bytes = std::size_t{64} << 20;
inline constexpr std::size_t max_list_items = std::size_t{1} << 22;
// EvalError naming `what` when a result would be larger.
void check_string_size(std::size_t bytes, const char* what);
void check_list_size(std::size_t items, const char* what);

// Strings count, index and iterate by code point, as Python's do.
std::vector<std::string> code_points(const std::string& utf8);

}  // namespace remat::text::jinja
