#pragma once
// The node kinds of a model tree (Functors.jl for C++) and the two primitives everything else is
// built on: visiting a node's children with their path segments, and rebuilding a node from
// transformed children (which may change its type).
//
//   Param, Tensor            leaves (parameter, buffer)
//   Hana struct              children are its members; segment = member name. A struct declaring
//                            `static constexpr bool transparent = true` adds no segment (Checkpointed<T>)
//   std::vector<T>           children are its elements; segment = index
//   std::tuple<T...>         children are its elements; segment = index (Chain)
//   std::optional<T>         its value, if any; no segment (BERT's pooler)
//   anything else            an opaque leaf, passed through untouched (ints, floats, generators)
#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/hana/define_struct.hpp>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "remat/core/param.hpp"

namespace remat::tree {

namespace hana = boost::hana;

template <class T>
using bare = std::remove_cvref_t<T>;

template <class T>
inline constexpr bool is_param = std::is_same_v<bare<T>, Param>;
template <class T>
inline constexpr bool is_buffer = std::is_same_v<bare<T>, Tensor>;

template <class T>
struct is_vector_t : std::false_type {};
template <class T, class A>
struct is_vector_t<std::vector<T, A>> : std::true_type {};
template <class T>
inline constexpr bool is_vector = is_vector_t<bare<T>>::value;

template <class T>
struct is_tuple_t : std::false_type {};
template <class... T>
struct is_tuple_t<std::tuple<T...>> : std::true_type {};
template <class T>
inline constexpr bool is_tuple = is_tuple_t<bare<T>>::value;

template <class T>
struct is_optional_t : std::false_type {};
template <class T>
struct is_optional_t<std::optional<T>> : std::true_type {};
template <class T>
inline constexpr bool is_optional = is_optional_t<bare<T>>::value;

template <class T>
inline constexpr bool is_struct = hana::Struct<bare<T>>::value;

template <class T>
concept transparent_struct = is_struct<T> && requires { requires bare<T>::transparent; };

// A node with children (as opposed to a leaf).
template <class T>
inline constexpr bool has_children = is_struct<T> || is_vector<T> || is_tuple<T> || is_optional<T>;

// "a" + "b" -> "a.b"; an empty segment adds nothing.
inline std::string join(std::string_view path, std::string_view segment) {
    if (segment.empty()) return std::string(path);
    if (path.empty()) return std::string(segment);
    std::string s;
    s.reserve(path.size() + 1 + segment.size());
    s.append(path).append(".").append(segment);
    return s;
}

// Containers that would hide layers from traversal: refused at compile time.
template <class T>
struct is_unsupported_container_t : std::false_type {};
template <class T, std::size_t N>
struct is_unsupported_container_t<std::array<T, N>> : std::true_type {};
template <class T, class D>
struct is_unsupported_container_t<std::unique_ptr<T, D>> : std::true_type {};
template <class A, class B>
struct is_unsupported_container_t<std::pair<A, B>> : std::true_type {};

// Calls f(segment, child) for each child of x, in declaration / index order. Works on const and
// mutable nodes alike (children are passed with x's constness).
template <class X, class F>
void for_each_child(X& x, F&& f) {
    using T = bare<X>;
    static_assert(!is_unsupported_container_t<T>::value,
                  "remat::tree: std::array, std::unique_ptr and std::pair members are not traversed; "
                  "hold layers in std::vector, std::tuple, std::optional or a Hana struct");
    if constexpr (is_struct<T>) {
        hana::for_each(hana::accessors<T>(), [&](auto pair) {
            constexpr bool hide = transparent_struct<T>;
            f(std::string(hide ? "" : hana::to<const char*>(hana::first(pair))), hana::second(pair)(x));
        });
    } else if constexpr (is_vector<T>) {
        for (std::size_t i = 0; i < x.size(); ++i) f(std::to_string(i), x[i]);
    } else if constexpr (is_tuple<T>) {
        std::size_t i = 0;
        std::apply([&](auto&... e) { (f(std::to_string(i++), e), ...); }, x);
    } else if constexpr (is_optional<T>) {
        if (x) f(std::string(), *x);
    }
}

namespace detail {
// Rebuilds a struct from its (transformed) members: a class template is re-deduced from them
// (CTAD), so wrapping a member's type changes the struct's type; a plain struct keeps its type.
template <class T>
struct rebuild {
    template <class... M>
    static T from(M&&... members) {
        static_assert(requires { T{std::declval<M>()...}; },
                      "remat::tree: a walk changed the type of a member of a struct that is not a class template; "
                      "make that member's type a template parameter of the struct");
        return T{std::forward<M>(members)...};
    }
};
template <template <class...> class Template, class... Args>
struct rebuild<Template<Args...>> {
    template <class... M>
    static auto from(M&&... members) {
        static_assert(requires { Template{std::declval<M>()...}; },
                      "remat::tree: cannot rebuild a class template from its rewritten members: a member whose type "
                      "changed is not a template parameter, or the template lacks a deduction guide");
        return Template{std::forward<M>(members)...};
    }
};
}  // namespace detail

// Passes a member on as x was passed: moved out of an rvalue, by const reference from an lvalue.
template <class X, class M>
decltype(auto) pass(M& member) {
    if constexpr (std::is_rvalue_reference_v<X&&>)
        return std::move(member);
    else
        return static_cast<const M&>(member);
}

// Rebuilds x from f(child, child_path) for each child, in order. From an rvalue the children are
// moved into f; from an lvalue they are passed by const reference (and opaque leaves copied). The
// result's type follows the children's new types.
template <class X, class F>
auto fmap_children(X&& x, F&& f, std::string_view path = "") {
    using T = bare<X>;
    if constexpr (is_struct<T>) {
        return hana::unpack(hana::accessors<T>(), [&](auto... pairs) {
            constexpr bool hide = transparent_struct<T>;
            // A braced list evaluates f in member order; the tuple then feeds the rebuild.
            auto members = std::tuple<decltype(f(pass<X>(hana::second(pairs)(x)), std::string()))...>{
                f(pass<X>(hana::second(pairs)(x)), join(path, hide ? "" : hana::to<const char*>(hana::first(pairs))))...};
            return std::apply([](auto&&... m) { return detail::rebuild<T>::from(std::move(m)...); }, std::move(members));
        });
    } else if constexpr (is_vector<T>) {
        using R = decltype(f(pass<X>(x[0]), std::string()));
        std::vector<R> out;
        out.reserve(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) out.push_back(f(pass<X>(x[i]), join(path, std::to_string(i))));
        return out;
    } else if constexpr (is_tuple<T>) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<decltype(f(pass<X>(std::get<I>(x)), std::string()))...>{
                f(pass<X>(std::get<I>(x)), join(path, std::to_string(I)))...};
        }(std::make_index_sequence<std::tuple_size_v<T>>{});
    } else if constexpr (is_optional<T>) {
        using R = decltype(f(pass<X>(*x), std::string()));
        return x ? std::optional<R>(f(pass<X>(*x), std::string(path))) : std::optional<R>();
    } else {
        return T(std::forward<X>(x));  // a leaf has no children
    }
}

}  // namespace remat::tree

namespace remat::tree {

// Functors.jl's children: a node's children by reference — a std::tuple of references for a struct
// or a tuple, the container itself for a vector or an optional, an empty tuple for a leaf. Their
// path segments, in the same order, come from child_segments(x).
template <class X>
decltype(auto) children(X& x) {
    using T = bare<X>;
    if constexpr (is_struct<T>)
        return hana::unpack(hana::accessors<T>(), [&](auto... pairs) { return std::tie(hana::second(pairs)(x)...); });
    else if constexpr (is_tuple<T>)
        return std::apply([](auto&... e) { return std::tie(e...); }, x);
    else if constexpr (is_vector<T> || is_optional<T>)
        return (x);
    else
        return std::tuple<>();
}

template <class X>
std::vector<std::string> child_segments(X& x) {
    std::vector<std::string> segments;
    for_each_child(x, [&](const std::string& segment, auto&) { segments.push_back(segment); });
    return segments;
}

}  // namespace remat::tree
