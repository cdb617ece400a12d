#include "render.hpp"

#include <cmath>

#include "builtins.hpp"
#include "template_error.hpp"

namespace remat::text::jinja {

namespace {

// Names visible at one level: the template's top level, a loop iteration, a macro call.
struct Scope {
    Dict names;
    Scope* parent = nullptr;

    const Value* lookup(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent)
            for (auto it = s->names.rbegin(); it != s->names.rend(); ++it)
                if (it->first == name) return &it->second;
        return nullptr;
    }
    void assign(const std::string& name, Value v) {
        for (auto& [key, value] : names)
            if (key == name) {
                value = std::move(v);
                return;
            }
        names.emplace_back(name, std::move(v));
    }
};

enum class Flow { normal, broke, continued };

std::string where(int line, int column) { return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": "; }

class Renderer {
public:
    Renderer(const RenderLimits& limits, const std::tm& now) : limits_(limits), now_(now) {
        builtins_.filter = [this](const std::string& name, Value subject, Arguments& args) {
            return apply_filter(name, std::move(subject), args, builtins_);
        };
        builtins_.test = [](const std::string& name, const Value& subject, Arguments& args) { return apply_test(name, subject, args); };
    }

    std::string run(const Program& program, const Dict& variables) {
        root_.names = variables;
        std::string out;
        out_ = &out;
        execute(program.body, root_);
        return out;
    }

private:
    void step(int line, int column) {
        if (++steps_ > limits_.steps)
            throw TemplateError(where(line, column) + "the template ran more than " + std::to_string(limits_.steps) +
                                " steps (a loop or recursion without end?)");
    }

    void write(const std::string& text, int line, int column) {
        if (out_->size() + text.size() > limits_.output_bytes)
            throw TemplateError(where(line, column) + "the rendered text would pass " + std::to_string(limits_.output_bytes) + " bytes");
        *out_ += text;
    }

    Flow execute(const Body& body, Scope& scope) {
        for (const Node& node : body) {
            const Flow flow = execute(node, scope);
            if (flow != Flow::normal) return flow;
        }
        return Flow::normal;
    }

    Flow execute(const Node& n, Scope& scope) {
        step(n.line, n.column);
        switch (n.kind) {
            case Node::Kind::text: write(n.text, n.line, n.column); return Flow::normal;
            case Node::Kind::output: write(to_string(evaluate(*n.expr, scope)), n.line, n.column); return Flow::normal;
            case Node::Kind::if_chain:
                for (const auto& [condition, body] : n.branches)
                    if (!condition || truthy(evaluate(*condition, scope))) return execute(body, scope);
                return Flow::normal;
            case Node::Kind::for_loop: loop(n, scope); return Flow::normal;
            case Node::Kind::set: {
                Value v = evaluate(*n.expr, scope);
                if (!n.attribute.empty()) {
                    const Value* target = scope.lookup(n.targets[0]);
                    if (!target || target->kind != Value::Kind::name_space)
                        throw TemplateError(where(n.line, n.column) + "can only set attributes of a namespace(), not of " +
                                            (target ? describe(*target) : "'" + n.targets[0] + "' (undefined)"));
                    Dict& d = *target->dict;
                    for (auto& [key, value] : d)
                        if (key == n.attribute) {
                            value = std::move(v);
                            return Flow::normal;
                        }
                    d.emplace_back(n.attribute, std::move(v));
                } else if (n.targets.size() == 1) {
                    scope.assign(n.targets[0], std::move(v));
                } else {
                    unpack(n, n.targets, v, scope);
                }
                return Flow::normal;
            }
            case Node::Kind::set_block: scope.assign(n.targets[0], Value::of(capture(n.body, scope))); return Flow::normal;
            case Node::Kind::macro: scope.assign(n.text, macro(n)); return Flow::normal;
            case Node::Kind::loop_break: return Flow::broke;
            case Node::Kind::loop_continue: return Flow::continued;
            case Node::Kind::block: return execute(n.body, scope);
        }
        return Flow::normal;
    }

    std::string capture(const Body& body, Scope& scope) {
        std::string text;
        std::string* outer = out_;
        out_ = &text;
        try {
            execute(body, scope);
        } catch (...) {
            out_ = outer;
            throw;
        }
        out_ = outer;
        if (outer->size() + text.size() > limits_.output_bytes)
            throw TemplateError("the rendered text would pass " + std::to_string(limits_.output_bytes) + " bytes");
        return text;
    }

    void unpack(const Node& n, const std::vector<std::string>& targets, const Value& v, Scope& scope) {
        if (v.kind != Value::Kind::list || v.list->size() != targets.size())
            throw TemplateError(where(n.line, n.column) + "cannot unpack " + describe(v) + " into " + std::to_string(targets.size()) + " names");
        for (std::size_t i = 0; i < targets.size(); ++i) scope.assign(targets[i], (*v.list)[i]);
    }

    void loop(const Node& n, Scope& scope) {
        const Value iterable = evaluate(*n.expr, scope);
        List items;
        switch (iterable.kind) {
            case Value::Kind::list: items = *iterable.list; break;
            case Value::Kind::dict:
                for (const auto& kv : *iterable.dict) items.push_back(Value::of(kv.first));
                break;
            case Value::Kind::string:
                for (auto& c : code_points(iterable.string)) items.push_back(Value::of(std::move(c)));
                break;
            case Value::Kind::undefined: break;
            default: throw TemplateError(where(n.expr->line, n.expr->column) + describe(iterable) + " is not iterable");
        }
        // `for x in xs if cond` filters first, so loop.length and loop.last count what is left.
        const auto bind = [&](Scope& s, const Value& item) {
            if (n.targets.size() == 1) s.assign(n.targets[0], item);
            else unpack(n, n.targets, item, s);
        };
        if (n.condition) {
            List kept;
            for (const Value& item : items) {
                step(n.line, n.column);
                Scope s{{}, &scope};
                bind(s, item);
                if (truthy(evaluate(*n.condition, s))) kept.push_back(item);
            }
            items = std::move(kept);
        }
        if (items.empty()) {
            execute(n.else_body, scope);
            return;
        }
        const auto length = static_cast<std::int64_t>(items.size());
        for (std::int64_t i = 0; i < length; ++i) {
            step(n.line, n.column);
            Scope s{{}, &scope};  // a fresh scope each iteration, as jinja2's
            Dict info{{"index", Value::of(i + 1)},
                      {"index0", Value::of(i)},
                      {"revindex", Value::of(length - i)},
                      {"revindex0", Value::of(length - i - 1)},
                      {"first", Value::of(i == 0)},
                      {"last", Value::of(i == length - 1)},
                      {"length", Value::of(length)},
                      {"depth", Value::of(std::int64_t{1})},
                      {"depth0", Value::of(std::int64_t{0})},
                      {"previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)] : Value::undefined("previtem")},
                      {"nextitem", i + 1 < length ? items[static_cast<std::size_t>(i + 1)] : Value::undefined("nextitem")}};
            info.emplace_back("cycle", Value::of(Function([i](Arguments& a) {
                if (a.positional.empty()) throw EvalError("loop.cycle: expected at least one value");
                return a.positional[static_cast<std::size_t>(i) % a.positional.size()];
            })));
            s.assign("loop", Value::of(std::move(info)));
            bind(s, items[static_cast<std::size_t>(i)]);
            if (execute(n.body, s) == Flow::broke) break;
        }
    }

    Value macro(const Node& n) {
        return Value::of(Function([this, &n](Arguments& args) {
            if (++depth_ > limits_.depth) {
                --depth_;
                throw EvalError("macros nested more than " + std::to_string(limits_.depth) + " calls deep");
            }
            struct Leave {
                std::size_t& d;
                ~Leave() { --d; }
            } leave{depth_};
            if (args.positional.size() > n.parameters.size())
                throw EvalError("macro '" + n.text + "' takes " + std::to_string(n.parameters.size()) + " arguments, got " +
                                std::to_string(args.positional.size()));
            Scope s{{}, &root_};  // a macro sees its arguments and the template's top level, as jinja2's
            for (std::size_t i = 0; i < n.parameters.size(); ++i) {
                const auto& [name, fallback] = n.parameters[i];
                const Value* given = i < args.positional.size() ? &args.positional[i] : nullptr;
                for (const auto& [key, v] : args.keyword)
                    if (key == name) given = &v;
                s.assign(name, given ? *given : fallback ? evaluate(*fallback, s) : Value::undefined(name));
            }
            for (const auto& keyword : args.keyword)
                if (std::none_of(n.parameters.begin(), n.parameters.end(), [&](const auto& p) { return p.first == keyword.first; }))
                    throw EvalError("macro '" + n.text + "' has no parameter '" + keyword.first + "'");
            return Value::of(capture(n.body, s));
        }));
    }

    // ---- Expressions ---------------------------------------------------------------------------

    Value evaluate(const Expr& e, Scope& scope) {
        step(e.line, e.column);
        try {
            return evaluate_here(e, scope);
        } catch (const EvalError& error) {
            throw TemplateError(where(e.line, e.column) + error.what());
        } catch (const Raised& raised) {
            throw TemplateError(raised.what());
        }
    }

    Arguments arguments(const Expr& e, Scope& scope) {
        Arguments args;
        for (const auto& item : e.items) args.positional.push_back(evaluate(*item, scope));
        for (const auto& [key, item] : e.keywords) args.keyword.emplace_back(key, evaluate(*item, scope));
        return args;
    }

    Value evaluate_here(const Expr& e, Scope& scope) {
        using K = Expr::Kind;
        switch (e.kind) {
            case K::literal: return e.value;
            case K::name: {
                if (const Value* v = scope.lookup(e.name)) return *v;
                Value g = global(e.name, now_);
                return g.is_undefined() ? Value::undefined(e.name) : g;
            }
            case K::list:
            case K::tuple: {
                List items;
                for (const auto& item : e.items) items.push_back(evaluate(*item, scope));
                return Value::of(std::move(items));
            }
            case K::dict: {
                Dict items;
                for (std::size_t i = 0; i + 1 < e.items.size(); i += 2) {
                    const Value key = evaluate(*e.items[i], scope);
                    if (key.kind != Value::Kind::string) throw EvalError("dict keys must be strings here, got " + describe(key));
                    Value v = evaluate(*e.items[i + 1], scope);
                    auto it = std::find_if(items.begin(), items.end(), [&](const auto& kv) { return kv.first == key.string; });
                    if (it != items.end()) it->second = std::move(v);
                    else items.emplace_back(key.string, std::move(v));
                }
                return Value::of(std::move(items));
            }
            case K::attribute: return attribute(evaluate(*e.a, scope), e.name);
            case K::subscript: return subscript(evaluate(*e.a, scope), evaluate(*e.b, scope));
            case K::slice: {
                const Value subject = evaluate(*e.a, scope);
                Value parts[3];
                for (std::size_t i = 0; i < 3; ++i) parts[i] = e.items[i] ? evaluate(*e.items[i], scope) : Value::none();
                return slice(subject, parts[0], parts[1], parts[2]);
            }
            case K::call: {
                const Value callee = evaluate(*e.a, scope);
                Arguments args = arguments(e, scope);
                if (callee.kind != Value::Kind::function) {
                    if (callee.is_undefined()) throw EvalError("'" + callee.string + "' is undefined");
                    throw EvalError(describe(callee) + " is not callable");
                }
                return (*callee.function)(args);
            }
            case K::filter: {
                Value subject = evaluate(*e.a, scope);
                Arguments args = arguments(e, scope);
                return apply_filter(e.name, std::move(subject), args, builtins_);
            }
            case K::test: {
                const Value subject = evaluate(*e.a, scope);
                Arguments args = arguments(e, scope);
                return Value::of(apply_test(e.name, subject, args) != e.negated);
            }
            case K::negate: {
                const Value v = evaluate(*e.a, scope);
                if (v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean) {
                    const std::int64_t i = v.kind == Value::Kind::boolean ? v.boolean : v.integer;
                    if (e.name == "-" && i == INT64_MIN) throw EvalError("integer overflow in unary -");
                    return Value::of(e.name == "-" ? -i : i);
                }
                if (v.kind == Value::Kind::floating) return Value::of(e.name == "-" ? -v.floating : v.floating);
                throw EvalError("bad operand for unary " + e.name + ": " + describe(v));
            }
            case K::binary: return binary(e.name, evaluate(*e.a, scope), evaluate(*e.b, scope));
            case K::compare: {
                Value left = evaluate(*e.a, scope);
                for (std::size_t i = 0; i < e.ops.size(); ++i) {
                    Value right = evaluate(*e.items[i], scope);
                    if (!compare(e.ops[i], left, right)) return Value::of(false);
                    left = std::move(right);
                }
                return Value::of(true);
            }
            case K::logical_and: {
                Value a = evaluate(*e.a, scope);
                return truthy(a) ? evaluate(*e.b, scope) : a;
            }
            case K::logical_or: {
                Value a = evaluate(*e.a, scope);
                return truthy(a) ? a : evaluate(*e.b, scope);
            }
            case K::logical_not: return Value::of(!truthy(evaluate(*e.a, scope)));
            case K::conditional:
                if (truthy(evaluate(*e.b, scope))) return evaluate(*e.a, scope);
                return e.c ? evaluate(*e.c, scope) : Value::undefined();
        }
        return Value::undefined();
    }

    static Value attribute(const Value& subject, const std::string& name) {
        switch (subject.kind) {
            case Value::Kind::undefined: throw EvalError(describe(subject) + " has no attribute '" + name + "'");
            case Value::Kind::dict: {
                Value m = method(subject, name);  // Python's getattr finds dict methods before keys
                if (!m.is_undefined()) return m;
                const Value* found = subject.find(name);
                return found ? *found : Value::undefined(name);
            }
            case Value::Kind::name_space: {
                const Value* found = subject.find(name);
                return found ? *found : Value::undefined(name);
            }
            default: return method(subject, name);
        }
    }

    static std::int64_t index_of(const Value& key) {
        if (key.kind == Value::Kind::integer) return key.integer;
        if (key.kind == Value::Kind::boolean) return key.boolean;
        throw EvalError("indices must be integers, got " + describe(key));
    }

    static Value subscript(const Value& subject, const Value& key) {
        switch (subject.kind) {
            case Value::Kind::undefined: throw EvalError(describe(subject) + " cannot be subscripted");
            case Value::Kind::dict:
            case Value::Kind::name_space: {
                if (key.kind != Value::Kind::string) return Value::undefined();
                const Value* found = subject.find(key.string);
                return found ? *found : Value::undefined(key.string);
            }
            case Value::Kind::list:
            case Value::Kind::string: {
                if (key.kind == Value::Kind::string) return attribute(subject, key.string);
                const bool is_list = subject.kind == Value::Kind::list;
                const std::vector<std::string> chars = is_list ? std::vector<std::string>{} : code_points(subject.string);
                const auto size = static_cast<std::int64_t>(is_list ? subject.list->size() : chars.size());
                std::int64_t i = index_of(key);
                if (i < 0) i += size;
                if (i < 0 || i >= size) return Value::undefined();
                return is_list ? (*subject.list)[static_cast<std::size_t>(i)] : Value::of(chars[static_cast<std::size_t>(i)]);
            }
            default: return Value::undefined();
        }
    }

    // Python's s[start:stop:step].
    static Value slice(const Value& subject, const Value& start, const Value& stop, const Value& step_value) {
        const bool is_list = subject.kind == Value::Kind::list;
        if (!is_list && subject.kind != Value::Kind::string) throw EvalError(describe(subject) + " cannot be sliced");
        const std::vector<std::string> chars = is_list ? std::vector<std::string>{} : code_points(subject.string);
        const auto n = static_cast<std::int64_t>(is_list ? subject.list->size() : chars.size());
        const std::int64_t step = step_value.kind == Value::Kind::none ? 1 : index_of(step_value);
        if (step == 0) throw EvalError("slice step cannot be zero");
        const auto bound = [&](const Value& v, std::int64_t fallback) {
            if (v.kind == Value::Kind::none) return fallback;
            std::int64_t i = index_of(v);
            if (i < 0) i += n;
            if (step > 0) return std::clamp<std::int64_t>(i, 0, n);
            return std::clamp<std::int64_t>(i, -1, n - 1);
        };
        const std::int64_t first = bound(start, step > 0 ? 0 : n - 1), last = bound(stop, step > 0 ? n : -1);
        List items;
        std::string text;
        for (std::int64_t i = first; step > 0 ? i < last : i > last;) {
            if (is_list) items.push_back((*subject.list)[static_cast<std::size_t>(i)]);
            else text += chars[static_cast<std::size_t>(i)];
            if (__builtin_add_overflow(i, step, &i)) break;  // past either end
        }
        return is_list ? Value::of(std::move(items)) : Value::of(std::move(text));
    }

    static bool compare(const std::string& op, const Value& a, const Value& b) {
        if (op == "==") return equal(a, b);
        if (op == "!=") return !equal(a, b);
        if (op == "<") return less(a, b);
        if (op == ">") return less(b, a);
        if (op == "<=") return !less(b, a);
        if (op == ">=") return !less(a, b);
        const bool in = [&] {
            switch (b.kind) {
                case Value::Kind::string:
                    if (a.kind != Value::Kind::string) throw EvalError("'in <string>' needs a string on the left, got " + describe(a));
                    return b.string.find(a.string) != std::string::npos;
                case Value::Kind::list:
                    return std::any_of(b.list->begin(), b.list->end(), [&](const Value& x) { return equal(x, a); });
                case Value::Kind::dict:
                case Value::Kind::name_space: return a.kind == Value::Kind::string && b.find(a.string) != nullptr;
                case Value::Kind::undefined: return false;
                default: throw EvalError("'in' needs a string, list or dict on the right, got " + describe(b));
            }
        }();
        return op == "in" ? in : !in;
    }

    static Value binary(const std::string& op, const Value& a, const Value& b) {
        using K = Value::Kind;
        if (op == "~") {
            std::string left = to_string(a), right = to_string(b);
            check_string_size(left.size() + right.size(), "~");
            return Value::of(std::move(left) + right);
        }
        const auto unsupported = [&]() -> Value {
            throw EvalError("unsupported operand types for " + op + ": " + describe(a) + " and " + describe(b));
        };
        if (a.is_undefined() || b.is_undefined()) unsupported();
        if (op == "+") {
            if (a.kind == K::string && b.kind == K::string) {
                check_string_size(a.string.size() + b.string.size(), "+");
                return Value::of(a.string + b.string);
            }
            if (a.kind == K::list && b.kind == K::list) {
                check_list_size(a.list->size() + b.list->size(), "+");
                List items = *a.list;
                items.insert(items.end(), b.list->begin(), b.list->end());
                return Value::of(std::move(items));
            }
        }
        if (op == "*") {
            const Value* text = a.kind == K::string ? &a : b.kind == K::string ? &b : nullptr;
            const Value* count = text == &a ? &b : &a;
            if (text && (count->kind == K::integer || count->kind == K::boolean)) {
                const std::int64_t n = count->kind == K::boolean ? count->boolean : count->integer;
                std::string out;
                if (n > 0 && !text->string.empty() && static_cast<std::size_t>(n) > max_value_bytes / text->string.size())
                    throw EvalError("a string repeated past 64 MiB");
                for (std::int64_t i = 0; i < n; ++i) out += text->string;
                return Value::of(std::move(out));
            }
        }
        if (!a.is_number() || !b.is_number()) unsupported();
        const bool integers = a.kind != K::floating && b.kind != K::floating;
        const auto as_int = [](const Value& v) { return v.kind == K::boolean ? std::int64_t{v.boolean} : v.integer; };
        // Python's integers do not overflow; these are 64-bit, and a result past them is refused.
        const auto overflow = [&]() -> Value { throw EvalError("integer overflow in " + op + " (integers here are 64-bit)"); };
        if (integers && op != "/" && op != "**") {
            const std::int64_t x = as_int(a), y = as_int(b);
            std::int64_t exact = 0;
            if (op == "+") return __builtin_add_overflow(x, y, &exact) ? overflow() : Value::of(exact);
            if (op == "-") return __builtin_sub_overflow(x, y, &exact) ? overflow() : Value::of(exact);
            if (op == "*") return __builtin_mul_overflow(x, y, &exact) ? overflow() : Value::of(exact);
            if (y == 0) throw EvalError("integer division or modulo by zero");
            if (x == INT64_MIN && y == -1) return op == "//" ? overflow() : Value::of(std::int64_t{0});
            std::int64_t q = x / y, r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) {  // Python floors
                --q;
                r += y;
            }
            return Value::of(op == "//" ? q : r);
        }
        const double x = a.number(), y = b.number();
        if (op == "+") return Value::of(x + y);
        if (op == "-") return Value::of(x - y);
        if (op == "*") return Value::of(x * y);
        if (op == "**") {
            if (integers && as_int(b) >= 0) {  // by squaring, each product checked
                std::int64_t result = 1, base = as_int(a);
                for (std::int64_t e = as_int(b); e > 0; e >>= 1) {
                    if ((e & 1) && __builtin_mul_overflow(result, base, &result)) return overflow();
                    if (e > 1 && __builtin_mul_overflow(base, base, &base)) return overflow();
                }
                return Value::of(result);
            }
            return Value::of(std::pow(x, y));
        }
        if (y == 0) throw EvalError("float division by zero");
        if (op == "/") return Value::of(x / y);
        const double q = std::floor(x / y);
        return op == "//" ? Value::of(q) : Value::of(x - q * y);
    }

    const RenderLimits& limits_;
    std::tm now_;
    Builtins builtins_;
    Scope root_;
    std::string* out_ = nullptr;
    std::size_t steps_ = 0, depth_ = 0;
};

}  // namespace

std::string render(const Program& program, const Dict& variables, const RenderLimits& limits, const std::tm& now) {
    return Renderer(limits, now).run(program, variables);
}

}  // namespace remat::text::jinja
