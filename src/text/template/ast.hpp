#pragma once
// The parsed template: statements (text, {{ output }}, if, for, set, macro, …) holding expressions.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "value.hpp"

namespace remat::text::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    enum class Kind {
        literal,      // value
        name,         // name
        list,         // [items]
        tuple,        // (items) — a list once evaluated, as templates only unpack or iterate it
        dict,         // {items[0]: items[1], …}
        attribute,    // a.name
        subscript,    // a[b]
        slice,        // a[items[0]:items[1]:items[2]] (null items omitted)
        call,         // a(items, keywords)
        filter,       // a | name(items, keywords)
        test,         // a is [not] name(items)
        negate,       // -a (name "-") or +a (name "+")
        binary,       // a name b: + - * / // % ** ~
        compare,      // a ops[0] items[0] ops[1] items[1] …  (== != < > <= >= in, not in)
        logical_and,  // a and b
        logical_or,   // a or b
        logical_not,  // not a
        conditional,  // a if b else c
    };
    Kind kind = Kind::literal;
    int line = 0, column = 0;
    Value value;
    std::string name;
    bool negated = false;
    std::vector<ExprPtr> items;
    std::vector<std::pair<std::string, ExprPtr>> keywords;
    std::vector<std::string> ops;
    ExprPtr a, b, c;
};

struct Node;
using Body = std::vector<Node>;

struct Node {
    enum class Kind {
        text,         // text
        output,       // {{ expr }}
        if_chain,     // branches: (condition, body)…, the else branch's condition null
        for_loop,     // for targets in expr [if condition] body [else else_body]
        set,          // set targets = expr, or set targets[0].attribute = expr
        set_block,    // set targets[0] %}body{% endset
        macro,        // macro name(parameters) body
        loop_break,
        loop_continue,
        block,        // a body rendered as it is: {% generation %} (HF's marker of assistant text)
    };
    Kind kind = Kind::text;
    int line = 0, column = 0;
    std::string text;  // text, or the macro's name
    ExprPtr expr, condition;
    std::vector<std::pair<ExprPtr, Body>> branches;
    std::vector<std::string> targets;
    std::string attribute;
    std::vector<std::pair<std::string, ExprPtr>> parameters;  // a macro's, with their defaults (or null)
    Body body, else_body;
};

struct Program {
    Body body;
};

}  // namespace remat::text::jinja
