#include "builtins.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "template_error.hpp"
#include "unicode_case.hpp"

namespace remat::text::jinja {

namespace {

constexpr std::int64_t max_range = 100'000;  // jinja2's sandbox refuses longer ranges

[[noreturn]] void wrong(const std::string& what, const std::string& expected, const Value& got) {
    throw EvalError(what + ": expected " + expected + ", got " + describe(got));
}

// Argument `index` (or the keyword `name`), or `fallback` when given neither.
Value argument(const Arguments& args, std::size_t index, const char* name, const Value& fallback) {
    for (const auto& [key, v] : args.keyword)
        if (key == name) return v;
    return index < args.positional.size() ? args.positional[index] : fallback;
}

void at_most(const std::string& what, const Arguments& args, std::size_t count) {
    if (args.positional.size() > count)
        throw EvalError(what + " takes at most " + std::to_string(count) + " argument" + (count == 1 ? "" : "s") + ", got " +
                        std::to_string(args.positional.size()));
}

const std::string& text_of(const std::string& what, const Value& v) {
    if (v.kind != Value::Kind::string) wrong(what, "a string", v);
    return v.string;
}

std::int64_t integer_of(const std::string& what, const Value& v) {
    if (v.kind == Value::Kind::integer) return v.integer;
    if (v.kind == Value::Kind::boolean) return v.boolean;
    wrong(what, "an integer", v);
}

// The items a for loop or a filter sees: a list's, a dict's keys, a string's characters; none for undefined.
List items_of(const std::string& what, const Value& v) {
    switch (v.kind) {
        case Value::Kind::list: return *v.list;
        case Value::Kind::dict: {
            List keys;
            for (const auto& kv : *v.dict) keys.push_back(Value::of(kv.first));
            return keys;
        }
        case Value::Kind::string: {
            List chars;
            for (auto& c : code_points(v.string)) chars.push_back(Value::of(std::move(c)));
            return chars;
        }
        case Value::Kind::undefined: return {};
        default: wrong(what, "a list, dict or string", v);
    }
}

bool is_space_point(const std::string& c) {
    if (c.size() == 1) return c[0] == ' ' || (c[0] >= '\t' && c[0] <= '\r') || (c[0] >= 0x1c && c[0] <= 0x1f);
    static const char* const unicode[] = {"\u0085", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004",
                                          "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a", "\u2028", "\u2029",
                                          "\u202f", "\u205f", "\u3000"};
    return std::any_of(std::begin(unicode), std::end(unicode), [&](const char* u) { return c == u; });
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, std::int64_t count) {
    std::string out;
    if (from.empty()) {  // Python inserts `to` between characters and at both ends
        const auto chars = code_points(s);
        std::int64_t done = 0;
        for (std::size_t i = 0; i <= chars.size(); ++i) {
            if (count < 0 || done < count) {
                check_string_size(out.size() + to.size(), "replace");
                out += to;
                ++done;
            }
            if (i < chars.size()) out += chars[i];
        }
        return out;
    }
    std::size_t at = 0;
    std::int64_t done = 0;
    for (;;) {
        const std::size_t found = s.find(from, at);
        if (found == std::string::npos || (count >= 0 && done >= count)) break;
        check_string_size(out.size() + (found - at) + to.size(), "replace");
        out += s.substr(at, found - at) + to;
        at = found + from.size();
        ++done;
    }
    return out + s.substr(at);
}

Value split(const std::string& s, const Value& separator, std::int64_t max_split) {
    List parts;
    if (separator.kind == Value::Kind::none || separator.is_undefined()) {  // runs of whitespace, no empty parts
        const auto chars = code_points(s);
        std::string part;
        std::size_t i = 0;
        while (i < chars.size() && is_space_point(chars[i])) ++i;
        for (; i < chars.size(); ++i) {
            if (is_space_point(chars[i])) {
                if (max_split >= 0 && static_cast<std::int64_t>(parts.size()) >= max_split) {
                    // The last part is the rest as it is (its trailing whitespace goes below).
                    for (std::size_t k = i; k < chars.size(); ++k) part += chars[k];
                    break;
                }
                parts.push_back(Value::of(std::move(part)));
                part.clear();
                while (i + 1 < chars.size() && is_space_point(chars[i + 1])) ++i;
            } else {
                part += chars[i];
            }
        }
        if (!part.empty()) parts.push_back(Value::of(strip(part, Value::none(), false, true)));
        return Value::of(std::move(parts));
    }
    const std::string& sep = text_of("split", separator);
    if (sep.empty()) throw EvalError("split: empty separator");
    std::size_t at = 0;
    for (;;) {
        const std::size_t found = s.find(sep, at);
        if (found == std::string::npos || (max_split >= 0 && static_cast<std::int64_t>(parts.size()) >= max_split)) break;
        parts.push_back(Value::of(s.substr(at, found - at)));
        at = found + sep.size();
    }
    parts.push_back(Value::of(s.substr(at)));
    return Value::of(std::move(parts));
}

bool affix(const std::string& s, const Value& what, bool prefix) {
    const auto one = [&](const Value& v) {
        const std::string& a = text_of(prefix ? "startswith" : "endswith", v);
        return prefix ? s.starts_with(a) : s.ends_with(a);
    };
    if (what.kind == Value::Kind::list) return std::any_of(what.list->begin(), what.list->end(), one);
    return one(what);
}

Value string_method(const std::string& s, const std::string& name) {
    const auto bind = [](auto f) { return Value::of(Function(f)); };
    if (name == "strip" || name == "lstrip" || name == "rstrip")
        return bind([s, name](Arguments& a) {
            at_most(name, a, 1);
            return Value::of(strip(s, argument(a, 0, "chars", Value::none()), name != "rstrip", name != "lstrip"));
        });
    if (name == "split")
        return bind([s](Arguments& a) {
            at_most("split", a, 2);
            const Value m = argument(a, 1, "maxsplit", Value::of(std::int64_t{-1}));
            return split(s, argument(a, 0, "sep", Value::none()), integer_of("split maxsplit", m));
        });
    if (name == "startswith" || name == "endswith")
        return bind([s, name](Arguments& a) {
            at_most(name, a, 1);
            return Value::of(affix(s, argument(a, 0, "prefix", Value::undefined()), name == "startswith"));
        });
    if (name == "replace")
        return bind([s](Arguments& a) {
            at_most("replace", a, 3);
            const Value count = argument(a, 2, "count", Value::of(std::int64_t{-1}));
            return Value::of(replace(s, text_of("replace", argument(a, 0, "old", Value::undefined())),
                                     text_of("replace", argument(a, 1, "new", Value::undefined())), integer_of("replace count", count)));
        });
    if (name == "upper") return bind([s](Arguments&) { return Value::of(unicode_upper(s)); });
    if (name == "lower") return bind([s](Arguments&) { return Value::of(unicode_lower(s)); });
    if (name == "title") return bind([s](Arguments&) { return Value::of(unicode_title(s)); });
    if (name == "capitalize") return bind([s](Arguments&) { return Value::of(unicode_capitalize(s)); });
    if (name == "find" || name == "count")
        return bind([s, name](Arguments& a) {
            at_most(name, a, 1);
            const std::string sub = text_of(name, argument(a, 0, "sub", Value::undefined()));
            if (name == "find") {
                const std::size_t at = s.find(sub);
                return Value::of(at == std::string::npos ? std::int64_t{-1}
                                                          : static_cast<std::int64_t>(code_points(s.substr(0, at)).size()));
            }
            if (sub.empty()) return Value::of(static_cast<std::int64_t>(code_points(s).size() + 1));
            std::int64_t n = 0;
            for (std::size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
            return Value::of(n);
        });
    if (name == "join")
        return bind([s](Arguments& a) {
            at_most("join", a, 1);
            std::string out;
            bool first = true;
            for (const Value& item : items_of("join", argument(a, 0, "iterable", Value::undefined()))) {
                const std::string& piece = text_of("join", item);
                check_string_size(out.size() + s.size() + piece.size(), "join");
                out += (first ? "" : s) + piece;
                first = false;
            }
            return Value::of(std::move(out));
        });
    if (name == "splitlines")
        return bind([s](Arguments&) {
            List lines;
            std::size_t at = 0;
            while (at < s.size()) {
                const std::size_t end = s.find('\n', at);
                if (end == std::string::npos) {
                    lines.push_back(Value::of(s.substr(at)));
                    break;
                }
                lines.push_back(Value::of(s.substr(at, end - at)));
                at = end + 1;
            }
            return Value::of(std::move(lines));
        });
    if (name == "isspace" || name == "isdigit" || name == "isalpha" || name == "isupper" || name == "islower")
        return bind([s, name](Arguments&) { return Value::of(unicode_is(name, s)); });
    return Value::undefined(name);
}

Value dict_method(const Value& d, const std::string& name) {
    if (name == "items" || name == "keys" || name == "values")
        return Value::of(Function([d, name](Arguments&) {
            List out;
            for (const auto& [key, v] : *d.dict) {
                if (name == "items") out.push_back(Value::of(List{Value::of(key), v}));
                else out.push_back(name == "keys" ? Value::of(key) : v);
            }
            return Value::of(std::move(out));
        }));
    if (name == "get")
        return Value::of(Function([d](Arguments& a) {
            at_most("get", a, 2);
            const Value key = argument(a, 0, "key", Value::undefined());
            const Value* found = key.kind == Value::Kind::string ? d.find(key.string) : nullptr;
            return found ? *found : argument(a, 1, "default", Value::none());
        }));
    return Value::undefined(name);
}

Value keyword_dict(Arguments& args, const std::string& what, Value::Kind kind) {
    Dict d;
    if (!args.positional.empty()) {
        if (args.positional.size() > 1 || !args.positional[0].is_mapping()) wrong(what, "one dict or keyword arguments", args.positional[0]);
        d = *args.positional[0].dict;
    }
    for (const auto& keyword : args.keyword) {
        auto it = std::find_if(d.begin(), d.end(), [&](const auto& kv) { return kv.first == keyword.first; });
        if (it != d.end()) it->second = keyword.second;
        else d.emplace_back(keyword);
    }
    return Value::of(std::move(d), kind);
}

// attribute "a.b.0" of a value, as jinja2's make_attrgetter resolves it.
Value attribute_path(const Value& v, const std::string& path) {
    Value current = v;
    std::size_t at = 0;
    while (at <= path.size()) {
        const std::size_t dot = path.find('.', at);
        const std::string part = path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
        if (current.is_mapping()) {
            const Value* found = current.find(part);
            current = found ? *found : Value::undefined(part);
        } else if (current.kind == Value::Kind::list && !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            const auto i = static_cast<std::size_t>(std::stoull(part));
            current = i < current.list->size() ? (*current.list)[i] : Value::undefined(part);
        } else {
            current = Value::undefined(part);
        }
        if (dot == std::string::npos) break;
        at = dot + 1;
    }
    return current;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace

std::string strip(const std::string& s, const Value& chars, bool left, bool right) {
    const auto points = code_points(s);
    std::vector<std::string> set;
    const bool whitespace = chars.kind == Value::Kind::none || chars.is_undefined();
    if (!whitespace) set = code_points(text_of("strip", chars));
    const auto strips = [&](const std::string& c) {
        return whitespace ? is_space_point(c) : std::find(set.begin(), set.end(), c) != set.end();
    };
    std::size_t begin = 0, end = points.size();
    if (left)
        while (begin < end && strips(points[begin])) ++begin;
    if (right)
        while (end > begin && strips(points[end - 1])) --end;
    std::string out;
    for (std::size_t i = begin; i < end; ++i) out += points[i];
    return out;
}

Value method(const Value& subject, const std::string& name) {
    if (subject.kind == Value::Kind::string) return string_method(subject.string, name);
    if (subject.kind == Value::Kind::dict) return dict_method(subject, name);
    return Value::undefined(name);
}

bool apply_test(const std::string& name, const Value& v, Arguments& args) {
    const Value arg = argument(args, 0, "value", Value::undefined());
    using K = Value::Kind;
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.kind == K::none;
    if (name == "boolean") return v.kind == K::boolean;
    if (name == "true") return v.kind == K::boolean && v.boolean;
    if (name == "false") return v.kind == K::boolean && !v.boolean;
    if (name == "integer") return v.kind == K::integer;
    if (name == "float") return v.kind == K::floating;
    if (name == "number") return v.is_number();
    if (name == "string") return v.kind == K::string;
    if (name == "mapping") return v.kind == K::dict;
    if (name == "iterable") return v.kind == K::list || v.kind == K::dict || v.kind == K::string || v.is_undefined();
    if (name == "sequence") return v.kind == K::list || v.kind == K::dict || v.kind == K::string;
    if (name == "callable") return v.kind == K::function;
    if (name == "odd" || name == "even") {
        const std::int64_t i = integer_of(name, v);
        return (i % 2 != 0) == (name == "odd");
    }
    if (name == "divisibleby") {
        const std::int64_t d = integer_of(name, arg);
        if (d == 0) throw EvalError("divisibleby: division by zero");
        return integer_of(name, v) % d == 0;
    }
    if (name == "eq" || name == "equalto" || name == "==") return equal(v, arg);
    if (name == "ne" || name == "!=") return !equal(v, arg);
    if (name == "lt" || name == "lessthan" || name == "<") return less(v, arg);
    if (name == "le" || name == "<=") return !less(arg, v);
    if (name == "gt" || name == "greaterthan" || name == ">") return less(arg, v);
    if (name == "ge" || name == ">=") return !less(v, arg);
    if (name == "in") {
        if (arg.kind == K::string) return v.kind == K::string && arg.string.find(v.string) != std::string::npos;
        const List items = items_of("in", arg);
        return std::any_of(items.begin(), items.end(), [&](const Value& x) { return equal(x, v); });
    }
    if (name == "sameas") return v.kind == arg.kind && (v.kind == K::none || v.kind == K::undefined || equal(v, arg));
    if (name == "lower") return v.kind == K::string && unicode_is("islower", v.string);  // jinja2: str(value).islower()
    if (name == "upper") return v.kind == K::string && unicode_is("isupper", v.string);
    throw EvalError("no test named '" + name + "'");
}

Value apply_filter(const std::string& name, Value v, Arguments& args, const Builtins& builtins) {
    using K = Value::Kind;
    const Value none = Value::none();
    if (name == "trim") {
        at_most(name, args, 1);
        return Value::of(strip(text_of(name, v), argument(args, 0, "chars", none), true, true));
    }
    if (name == "length" || name == "count") {
        switch (v.kind) {
            case K::string: return Value::of(static_cast<std::int64_t>(code_points(v.string).size()));
            case K::list: return Value::of(static_cast<std::int64_t>(v.list->size()));
            case K::dict:
            case K::name_space: return Value::of(static_cast<std::int64_t>(v.dict->size()));
            case K::undefined: return Value::of(std::int64_t{0});
            default: wrong(name, "a string, list or dict", v);
        }
    }
    if (name == "tojson") {
        at_most(name, args, 1);
        const Value indent = argument(args, 0, "indent", none);
        for (const auto& [key, value] : args.keyword)
            if ((key == "sort_keys" || key == "ensure_ascii") && truthy(value)) throw EvalError("tojson: " + key + " is not supported");
        return Value::of(to_json(v, indent.kind == K::none ? -1 : static_cast<int>(integer_of("tojson indent", indent))));
    }
    if (name == "default" || name == "d") {
        at_most(name, args, 2);
        const bool boolean = truthy(argument(args, 1, "boolean", Value::of(false)));
        if (v.is_undefined() || (boolean && !truthy(v))) return argument(args, 0, "default_value", Value::of(std::string()));
        return v;
    }
    if (name == "string") return Value::of(to_string(v));
    if (name == "safe") return v;
    if (name == "e" || name == "escape") return Value::of(html_escape(to_string(v)));
    if (name == "upper") return Value::of(unicode_upper(text_of(name, v)));
    if (name == "lower") return Value::of(unicode_lower(text_of(name, v)));
    if (name == "title") return Value::of(jinja_title(text_of(name, v)));
    if (name == "capitalize") return Value::of(unicode_capitalize(text_of(name, v)));
    if (name == "replace") {
        at_most(name, args, 3);
        const Value count = argument(args, 2, "count", Value::of(std::int64_t{-1}));
        return Value::of(replace(to_string(v), text_of(name, argument(args, 0, "old", none)),
                                 text_of(name, argument(args, 1, "new", none)), count.kind == K::none ? -1 : integer_of(name, count)));
    }
    if (name == "int") {
        const Value fallback = argument(args, 0, "default", Value::of(std::int64_t{0}));
        if (v.kind == K::integer) return v;
        if (v.kind == K::boolean) return Value::of(static_cast<std::int64_t>(v.boolean));
        const auto in_range = [](double d) { return std::isfinite(d) && d > -0x1p63 && d < 0x1p63; };  // else int() would not fit
        if (v.kind == K::floating) return in_range(v.floating) ? Value::of(static_cast<std::int64_t>(v.floating)) : fallback;
        if (v.kind == K::string) {
            const std::string s = strip(v.string, none, true, true);
            char* end = nullptr;
            const long long i = std::strtoll(s.c_str(), &end, 10);
            if (!s.empty() && end == s.c_str() + s.size()) return Value::of(static_cast<std::int64_t>(i));
            const double d = std::strtod(s.c_str(), &end);
            if (!s.empty() && end == s.c_str() + s.size() && in_range(d)) return Value::of(static_cast<std::int64_t>(d));
        }
        return fallback;
    }
    if (name == "float") {
        if (v.is_number()) return Value::of(v.number());
        if (v.kind == K::string) {
            const std::string s = strip(v.string, none, true, true);
            char* end = nullptr;
            const double d = std::strtod(s.c_str(), &end);
            if (!s.empty() && end == s.c_str() + s.size()) return Value::of(d);
        }
        return argument(args, 0, "default", Value::of(0.0));
    }
    if (name == "abs") {
        if (v.kind == K::integer) {
            if (v.integer == INT64_MIN) throw EvalError("abs: integer overflow (integers here are 64-bit)");
            return Value::of(v.integer < 0 ? -v.integer : v.integer);
        }
        if (v.kind == K::floating) return Value::of(std::fabs(v.floating));
        wrong(name, "a number", v);
    }
    if (name == "round") {
        const std::int64_t digits = integer_of(name, argument(args, 0, "precision", Value::of(std::int64_t{0})));
        const double scale = std::pow(10.0, static_cast<double>(digits));
        return Value::of(std::round(v.number() * scale) / scale);
    }
    if (name == "list") return Value::of(items_of(name, v));
    if (name == "items") {
        if (v.is_undefined()) return Value::of(List{});
        if (!v.is_mapping()) wrong(name, "a dict", v);
        List out;
        for (const auto& [key, item] : *v.dict) out.push_back(Value::of(List{Value::of(key), item}));
        return Value::of(std::move(out));
    }
    if (name == "first" || name == "last") {
        const List items = items_of(name, v);
        if (items.empty()) return Value::undefined(name);
        return name == "first" ? items.front() : items.back();
    }
    if (name == "reverse") {
        if (v.kind == K::string) {
            auto chars = code_points(v.string);
            std::string out;
            for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
            return Value::of(std::move(out));
        }
        List items = items_of(name, v);
        std::reverse(items.begin(), items.end());
        return Value::of(std::move(items));
    }
    if (name == "join") {
        at_most(name, args, 2);
        const std::string separator = to_string(argument(args, 0, "d", Value::of(std::string())));
        const Value attribute = argument(args, 1, "attribute", none);
        std::string out;
        bool first = true;
        for (const Value& item : items_of(name, v)) {
            const std::string piece = to_string(attribute.kind == K::none ? item : attribute_path(item, to_string(attribute)));
            check_string_size(out.size() + separator.size() + piece.size(), "join");
            out += (first ? "" : separator) + piece;
            first = false;
        }
        return Value::of(std::move(out));
    }
    if (name == "unique") {
        List out;
        for (const Value& item : items_of(name, v))
            if (std::none_of(out.begin(), out.end(), [&](const Value& x) { return equal(x, item); })) out.push_back(item);
        return Value::of(std::move(out));
    }
    if (name == "sum") {
        const Value attribute = argument(args, 0, "attribute", none);
        Value total = argument(args, 1, "start", Value::of(std::int64_t{0}));
        for (const Value& item : items_of(name, v)) {
            const Value x = attribute.kind == K::none ? item : attribute_path(item, to_string(attribute));
            if (!x.is_number() || !total.is_number()) wrong(name, "numbers", x);
            if (total.kind == K::floating || x.kind == K::floating) {
                total = Value::of(total.number() + x.number());
            } else {
                std::int64_t r = 0;
                if (__builtin_add_overflow(integer_of(name, total), integer_of(name, x), &r)) throw EvalError("sum: integer overflow");
                total = Value::of(r);
            }
        }
        return total;
    }
    if (name == "min" || name == "max") {
        const List items = items_of(name, v);
        if (items.empty()) return Value::undefined(name);
        Value best = items.front();
        for (const Value& item : items)
            if (name == "min" ? less(item, best) : less(best, item)) best = item;
        return best;
    }
    if (name == "map") {
        List out;
        const Value attribute = argument(args, 999, "attribute", Value::undefined());
        if (!attribute.is_undefined()) {
            const Value fallback = argument(args, 999, "default", Value::undefined());
            for (const Value& item : items_of(name, v)) {
                Value x = attribute_path(item, to_string(attribute));
                out.push_back(x.is_undefined() && !fallback.is_undefined() ? fallback : x);
            }
            return Value::of(std::move(out));
        }
        if (args.positional.empty()) throw EvalError("map: expected a filter name or attribute=");
        const std::string filter = text_of(name, args.positional[0]);
        for (const Value& item : items_of(name, v)) {
            Arguments rest{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
            out.push_back(builtins.filter(filter, item, rest));
        }
        return Value::of(std::move(out));
    }
    if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
        const bool by_attribute = name.ends_with("attr"), keep = name.starts_with("select");
        std::size_t next = 0;
        std::string attribute;
        if (by_attribute) {
            if (args.positional.empty()) throw EvalError(name + ": expected an attribute name");
            attribute = text_of(name, args.positional[next++]);
        }
        std::string test;
        if (next < args.positional.size()) test = text_of(name, args.positional[next++]);
        List out;
        for (const Value& item : items_of(name, v)) {
            const Value x = by_attribute ? attribute_path(item, attribute) : item;
            Arguments rest{{args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end()}, {}};
            const bool passes = test.empty() ? truthy(x) : builtins.test(test, x, rest);
            if (passes == keep) out.push_back(item);
        }
        return Value::of(std::move(out));
    }
    if (name == "indent") {
        const std::int64_t width = integer_of(name, argument(args, 0, "width", Value::of(std::int64_t{4})));
        const bool first = truthy(argument(args, 1, "first", Value::of(false)));
        const bool blank = truthy(argument(args, 2, "blank", Value::of(false)));
        if (width > 4096) throw EvalError("indent: a width over 4096");
        const std::string pad(static_cast<std::size_t>(std::max<std::int64_t>(width, 0)), ' ');
        const std::string s = to_string(v);
        std::string out;
        std::size_t at = 0;
        bool first_line = true;
        while (at <= s.size()) {
            const std::size_t end = s.find('\n', at);
            const std::string line = s.substr(at, end == std::string::npos ? std::string::npos : end - at);
            if ((first_line ? first : true) && (blank || !line.empty())) out += pad;
            out += line;
            check_string_size(out.size(), "indent");
            if (end == std::string::npos) break;
            out += '\n';
            at = end + 1;
            first_line = false;
        }
        return Value::of(std::move(out));
    }
    throw EvalError("no filter named '" + name + "'");
}

Value global(const std::string& name, const std::tm& now) {
    if (name == "range")
        return Value::of(Function([](Arguments& a) {
            std::int64_t start = 0, stop = 0, step = 1;
            if (a.positional.size() == 1) stop = integer_of("range", a.positional[0]);
            else if (a.positional.size() == 2 || a.positional.size() == 3) {
                start = integer_of("range", a.positional[0]);
                stop = integer_of("range", a.positional[1]);
                if (a.positional.size() == 3) step = integer_of("range", a.positional[2]);
            } else {
                throw EvalError("range: expected 1 to 3 integers");
            }
            if (step == 0) throw EvalError("range: step must not be zero");
            List out;
            for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
                if (static_cast<std::int64_t>(out.size()) >= max_range)
                    throw EvalError("range: more than " + std::to_string(max_range) + " items");
                out.push_back(Value::of(i));
                if (__builtin_add_overflow(i, step, &i)) break;  // past the 64-bit range: past stop too
            }
            return Value::of(std::move(out));
        }));
    if (name == "namespace") return Value::of(Function([](Arguments& a) { return keyword_dict(a, "namespace", Value::Kind::name_space); }));
    if (name == "dict") return Value::of(Function([](Arguments& a) { return keyword_dict(a, "dict", Value::Kind::dict); }));
    if (name == "raise_exception")
        return Value::of(Function([](Arguments& a) -> Value {
            throw Raised(a.positional.empty() ? std::string("raise_exception()") : to_string(a.positional[0]));
        }));
    if (name == "strftime_now")
        return Value::of(Function([now](Arguments& a) {
            const std::string format = text_of("strftime_now", argument(a, 0, "format", Value::undefined()));
            char buffer[512];
            const std::size_t n = std::strftime(buffer, sizeof buffer, format.c_str(), &now);
            if (n == 0 && !format.empty()) throw EvalError("strftime_now: the format gives more than 511 bytes or nothing");
            return Value::of(std::string(buffer, n));
        }));
    return Value::undefined(name);
}

}  // namespace remat::text::jinja
