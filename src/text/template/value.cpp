#include "value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "template_error.hpp"

namespace remat::text::jinja {

Value Value::from_json(const nlohmann::ordered_json& j) {
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null: return none();
        case nlohmann::ordered_json::value_t::boolean: return of(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer: return of(j.get<std::int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            const auto u = j.get<std::uint64_t>();
            return u <= static_cast<std::uint64_t>(INT64_MAX) ? of(static_cast<std::int64_t>(u)) : of(static_cast<double>(u));
        }
        case nlohmann::ordered_json::value_t::number_float: return of(j.get<double>());
        case nlohmann::ordered_json::value_t::string: return of(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            List items;
            for (const auto& item : j) items.push_back(from_json(item));
            return of(std::move(items));
        }
        case nlohmann::ordered_json::value_t::object: {
            Dict items;
            for (const auto& [key, item] : j.items()) items.emplace_back(key, from_json(item));
            return of(std::move(items));
        }
        default: return none();  // binary and discarded values do not come from parsed JSON text
    }
}

const Value* Value::find(const std::string& key) const {
    if (!dict) return nullptr;
    for (const auto& [k, v] : *dict)
        if (k == key) return &v;
    return nullptr;
}

bool truthy(const Value& v) {
    switch (v.kind) {
        case Value::Kind::undefined:
        case Value::Kind::none: return false;
        case Value::Kind::boolean: return v.boolean;
        case Value::Kind::integer: return v.integer != 0;
        case Value::Kind::floating: return v.floating != 0;
        case Value::Kind::string: return !v.string.empty();
        case Value::Kind::list: return !v.list->empty();
        case Value::Kind::dict: return !v.dict->empty();
        case Value::Kind::name_space:
        case Value::Kind::function: return true;
    }
    return false;
}

namespace {

// Python's repr of a float: the shortest digits that read back, in exponent form below 1e-4 and from 1e16.
std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    char buf[64];
    const auto sci = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string s(buf, sci.ptr);
    const auto e = s.find('e');
    const int exponent = std::stoi(s.substr(e + 1));
    if (exponent < -4 || exponent >= 16) {
        // Python writes e+16 / e-05: a sign and at least two digits.
        std::string mantissa = s.substr(0, e);
        const int magnitude = exponent < 0 ? -exponent : exponent;
        return mantissa + (exponent < 0 ? "e-" : "e+") + (magnitude < 10 ? "0" : "") + std::to_string(magnitude);
    }
    const auto fixed = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
    std::string f(buf, fixed.ptr);
    if (f.find('.') == std::string::npos) f += ".0";
    return f;
}

std::string quoted_repr(const std::string& s) {
    const bool double_quotes = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char quote = double_quotes ? '"' : '\'';
    std::string out(1, quote);
    for (const unsigned char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == static_cast<unsigned char>(quote)) out += std::string("\\") + quote;
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else out += static_cast<char>(c);
    }
    return out + quote;
}

void json_string(const std::string& s, std::string& out) {
    out += '"';
    for (const unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "\\u%04x", c);
                    out += hex;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
}

void json_value(const Value& v, int indent, int depth, std::string& out) {
    const auto newline = [&](int level) {
        out += '\n';
        out.append(static_cast<std::size_t>(indent * level), ' ');
    };
    switch (v.kind) {
        case Value::Kind::none: out += "null"; return;
        case Value::Kind::boolean: out += v.boolean ? "true" : "false"; return;
        case Value::Kind::integer: out += std::to_string(v.integer); return;
        case Value::Kind::floating:
            out += std::isnan(v.floating) ? "NaN" : std::isinf(v.floating) ? (v.floating > 0 ? "Infinity" : "-Infinity") : float_repr(v.floating);
            return;
        case Value::Kind::string: json_string(v.string, out); return;
        case Value::Kind::list: {
            if (v.list->empty()) {
                out += "[]";
                return;
            }
            out += '[';
            for (std::size_t i = 0; i < v.list->size(); ++i) {
                if (i) out += indent >= 0 ? "," : ", ";
                if (indent >= 0) newline(depth + 1);
                json_value((*v.list)[i], indent, depth + 1, out);
            }
            if (indent >= 0) newline(depth);
            out += ']';
            return;
        }
        case Value::Kind::dict:
        case Value::Kind::name_space: {
            if (v.dict->empty()) {
                out += "{}";
                return;
            }
            out += '{';
            bool first = true;
            for (const auto& [key, item] : *v.dict) {
                if (!first) out += indent >= 0 ? "," : ", ";
                first = false;
                if (indent >= 0) newline(depth + 1);
                json_string(key, out);
                out += ": ";
                json_value(item, indent, depth + 1, out);
            }
            if (indent >= 0) newline(depth);
            out += '}';
            return;
        }
        case Value::Kind::undefined:
        case Value::Kind::function: throw EvalError("tojson: " + describe(v) + " is not JSON serializable");
    }
}

}  // namespace

std::string to_string(const Value& v) {
    switch (v.kind) {
        case Value::Kind::undefined: return "";
        case Value::Kind::none: return "None";
        case Value::Kind::boolean: return v.boolean ? "True" : "False";
        case Value::Kind::integer: return std::to_string(v.integer);
        case Value::Kind::floating: return float_repr(v.floating);
        case Value::Kind::string: return v.string;
        default: return repr(v);
    }
}

std::string repr(const Value& v) {
    switch (v.kind) {
        case Value::Kind::string: return quoted_repr(v.string);
        case Value::Kind::list: {
            std::string out = "[";
            for (std::size_t i = 0; i < v.list->size(); ++i) out += (i ? ", " : "") + repr((*v.list)[i]);
            return out + "]";
        }
        case Value::Kind::dict: {
            std::string out = "{";
            bool first = true;
            for (const auto& [key, item] : *v.dict) {
                out += (first ? "" : ", ") + quoted_repr(key) + ": " + repr(item);
                first = false;
            }
            return out + "}";
        }
        case Value::Kind::name_space: return "<Namespace>";
        case Value::Kind::function: return "<function>";
        default: return to_string(v);
    }
}

std::string to_json(const Value& v, int indent) {
    std::string out;
    json_value(v, indent, 0, out);
    return out;
}

bool equal(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.kind != Value::Kind::floating && b.kind != Value::Kind::floating)
            return (a.kind == Value::Kind::boolean ? a.boolean : a.integer) == (b.kind == Value::Kind::boolean ? b.boolean : b.integer);
        return a.number() == b.number();
    }
    if (a.kind != b.kind) return false;
    switch (a.kind) {
        case Value::Kind::undefined:
        case Value::Kind::none: return true;
        case Value::Kind::string: return a.string == b.string;
        case Value::Kind::list: {
            if (a.list->size() != b.list->size()) return false;
            for (std::size_t i = 0; i < a.list->size(); ++i)
                if (!equal((*a.list)[i], (*b.list)[i])) return false;
            return true;
        }
        case Value::Kind::dict: {
            if (a.dict->size() != b.dict->size()) return false;
            for (const auto& [key, item] : *a.dict) {
                const Value* other = b.find(key);
                if (!other || !equal(item, *other)) return false;
            }
            return true;
        }
        default: return a.dict == b.dict && a.function == b.function;  // identity
    }
}

bool less(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) return a.number() < b.number();
    if (a.kind == Value::Kind::string && b.kind == Value::Kind::string) return a.string < b.string;  // UTF-8 orders as code points
    if (a.kind == Value::Kind::list && b.kind == Value::Kind::list) {
        const List &x = *a.list, &y = *b.list;
        for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (less(x[i], y[i])) return true;
            if (less(y[i], x[i])) return false;
        }
        return x.size() < y.size();
    }
    throw EvalError("'<' not supported between " + describe(a) + " and " + describe(b));
}

std::string describe(const Value& v) {
    switch (v.kind) {
        case Value::Kind::undefined: return v.string.empty() ? "an undefined value" : "'" + v.string + "' (undefined)";
        case Value::Kind::none: return "None";
        case Value::Kind::boolean: return "a boolean";
        case Value::Kind::integer: return "an integer";
        case Value::Kind::floating: return "a float";
        case Value::Kind::string: return "a string";
        case Value::Kind::list: return "a list";
        case Value::Kind::dict: return "a dict";
        case Value::Kind::name_space: return "a namespace";
        case Value::Kind::function: return "a function";
    }
    return "a value";
}

void check_string_size(std::size_t bytes, const char* what) {
    if (bytes > max_value_bytes) throw EvalError(std::string(what) + ": a string longer than 64 MiB");
}

void check_list_size(std::size_t items, const char* what) {
    if (items > max_list_items) throw EvalError(std::string(what) + ": a list longer than " + std::to_string(max_list_items) + " items");
}

std::vector<std::string> code_points(const std::string& s) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
        if (i + n > s.size()) n = 1;
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

}  // namespace remat::text::jinja
