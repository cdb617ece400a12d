#pragma once
// Prints a model as a tree with parameter counts, like Flux's show:
//
//   Chain(
//     layers.0: Linear(4 => 8)                 # 40 parameters
//     layers.1: gelu_tanh
//     layers.2: Linear(8 => 1)                 # 9 parameters
//   )                                              # 49 parameters
//   total: 4 arrays, 49 parameters
//
// A layer with describe() prints on one line; other structs list their members. Transparent
// wrappers (Checkpointed<T>) print as what they wrap. An opaque leaf prints as a number, a bool,
// `to_string(leaf)` when argument-dependent lookup finds one (the customisation point: nn::Mode
// prints so), or its type's `name`; other leaves (generator handles, options) are not shown.
#include <ostream>
#include <sstream>
#include <string>

#include <boost/hana/length.hpp>

#include "remat/tree/parameters.hpp"

namespace remat::tree {

// Found only by argument-dependent lookup: the deleted overload stops ordinary lookup here.
namespace leaf_string {
void to_string() = delete;
template <class T>
concept printable = requires(const T& t) { { to_string(t) } -> std::convertible_to<std::string>; };
template <class T>
std::string of(const T& t) { return to_string(t); }
}  // namespace leaf_string

namespace detail {
template <class T>
concept describable = requires(const T& t) { { t.describe() } -> std::convertible_to<std::string>; };
template <class T>
concept named = requires { { T::name } -> std::convertible_to<const char*>; };

template <class T, bool = is_struct<T>>
struct single_member_t : std::false_type {};
template <class T>
struct single_member_t<T, true> : std::bool_constant<decltype(hana::length(hana::accessors<T>()))::value == 1> {};
template <class T>
inline constexpr bool single_member = single_member_t<T>::value;

inline std::string with_count(std::string line, std::size_t parameters) {
    if (parameters == 0) return line + "\n";
    if (line.size() < 48) line.resize(48, ' ');
    return line + "  # " + std::to_string(parameters) + " parameters\n";
}

inline std::size_t count_arrays(const auto& x) {
    std::size_t n = 0;
    foreach_parameter(x, [&](const std::string&, const Param&) { ++n; });
    return n;
}

template <class X>
void show_node(std::ostream& os, const X& x, const std::string& label, const std::string& indent) {
    using T = bare<X>;
    const std::string head = indent + label;
    if constexpr (transparent_struct<T>) {
        for_each_child(x, [&](const std::string&, const auto& child) {
            if constexpr (has_children<decltype(child)> || describable<bare<decltype(child)>>)
                show_node(os, child, label, indent);
        });
    } else if constexpr (describable<T>) {
        os << with_count(head + x.describe(), count_parameters(x));
    } else if constexpr (is_param<T>) {
        os << head << "Param" << remat::to_string(x.shape()) << (x.frozen ? ", frozen" : "") << "\n";
    } else if constexpr (is_buffer<T>) {
        os << head << "buffer" << remat::to_string(x.shape()) << "\n";
    } else if constexpr (is_optional<T>) {
        if (!x) os << head << "none\n";
        for_each_child(x, [&](const std::string&, const auto& value) { show_node(os, value, label, indent); });
    } else if constexpr (has_children<T>) {
        const char* open = is_vector<T> ? "[" : "(";
        const char* close = is_vector<T> ? "]" : ")";
        std::string name;
        if constexpr (named<T>) name = T::name;
        os << head << name << open << "\n";
        for_each_child(x, [&](const std::string& segment, const auto& child) {
            using C = bare<decltype(child)>;
            if constexpr (is_struct<T> && single_member<T> && (is_tuple<C> || is_vector<C>)) {
                // Chain(layers: (a, b)) reads better as Chain(layers.0: a, layers.1: b).
                for_each_child(child, [&](const std::string& index, const auto& grandchild) {
                    show_node(os, grandchild, segment + "." + index + ": ", indent + "  ");
                });
            } else {
                show_node(os, child, segment + ": ", indent + "  ");
            }
        });
        os << with_count(indent + close, count_parameters(x));
    } else if constexpr (std::is_same_v<T, bool>) {
        os << head << (x ? "true" : "false") << "\n";
    } else if constexpr (std::is_arithmetic_v<T>) {
        os << head << x << "\n";
    } else if constexpr (leaf_string::printable<T>) {
        os << head << leaf_string::of(x) << "\n";
    } else if constexpr (named<T>) {
        os << head << T::name << "\n";
    }
    // Other opaque leaves (generator handles, config) are not shown.
}
}  // namespace detail

template <class X>
void show(std::ostream& os, const X& model) {
    detail::show_node(os, model, "", "");
    os << "total: " << detail::count_arrays(model) << " arrays, " << count_parameters(model) << " parameters\n";
}

template <class X>
std::string summary(const X& model) {
    std::ostringstream os;
    show(os, model);
    return os.str();
}

}  // namespace remat::tree
