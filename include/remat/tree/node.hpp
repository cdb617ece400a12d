#pragma once
// The node kinds of a model tree (Functors.jl for C++) and the one primitive every walk is built on.
//
//   Param, Tensor            leaves (parameter, buffer)
//   Hana struct              children are its members; segment = member name. A struct declaring
//                            `static constexpr bool transparent = true` adds no segment (Checkpointed<T>);
//                            a member whose type (or optional's value type) declares `static constexpr
//                            bool flattened = true` adds none either: its own members read as the
//                            holder's (a Linear's LoRA adapter: c_attn.lora_A.weight, as PEFT names it)
//   std::vector<T>           children are its elements; segment = index
//   std::tuple<T...>         children are its elements; segment = index (Chain)
//   std::optional<T>         its value, if any; no segment (BERT's pooler)
//   anything else            an opaque leaf, passed through untouched (ints, floats, generators)
//
// The primitive is Functors.jl's `functor`, split in its two halves: map_children(x, f) calls
// f(segment, child) on each child in order and returns the results (nothing when f returns nothing),
// and rebuild(x, results) makes the node again from them — re-deducing a class template, so the
// node's type follows its children's. for_each_child, fmap_children, children, visit, fmap,
// postwalk, prewalk, map_leaves and show are all written on these two; nothing else looks at the
// node kinds' insides.
#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/hana/define_struct.hpp>
#include <array>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "remat/ad/var.hpp"
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

template <class T>
struct optional_value_t {
    using type = T;
};
template <class T>
struct optional_value_t<std::optional<T>> {
    using type = T;
};
// A member of this type adds no segment (see above).
template <class T>
concept flattened_member = requires { requires optional_value_t<bare<T>>::type::flattened; };

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

// Passes a member on as x was passed: moved out of an rvalue, by const reference from an lvalue.
template <class X, class M>
decltype(auto) pass(M& member) {
    if constexpr (std::is_rvalue_reference_v<X&&>)
        return std::move(member);
    else
        return static_cast<const M&>(member);
}

namespace detail {
// A value that converts to anything: T{any × n} compiles iff T has at least n members.
struct any_member {
    template <class U>
    operator U&&() const;
};
template <class T, std::size_t... I>
constexpr bool accepts_initializers(std::index_sequence<I...>) {
    return requires { T{(static_cast<void>(I), any_member{})...}; };
}
template <class T>
constexpr std::size_t reflected_count() {
    return decltype(hana::length(hana::accessors<T>()))::value;
}

// A plain aggregate with a call operator that is not reflected: a layer the walks cannot see into.
template <class T>
concept unreflected_layer = std::is_class_v<T> && std::is_aggregate_v<T> && !std::is_empty_v<T> && !is_struct<T> &&
                            (std::is_invocable_v<T&, const Var&> || std::is_invocable_v<T&, const IdTensor&>);

// The checks every node type passes, each a single static_assert instantiated once per type, so a
// misuse gives one error whatever the number of walks over it.
template <class T>
struct checked_node {
    static_assert(!is_unsupported_container_t<T>::value,
                  "remat::tree: std::array, std::unique_ptr and std::pair members are not traversed; "
                  "hold layers in std::vector, std::tuple, std::optional or a Hana struct");
    static_assert(!unreflected_layer<T>,
                  "remat::tree: this struct has a call operator but no reflected members, so walks cannot see its "
                  "parameters or rebuild it: declare its members with BOOST_HANA_DEFINE_STRUCT, or declare the "
                  "struct with REMAT_MODEL(Name, (Type, member)...) so that set_checkpointing can wrap its blocks");
    static constexpr bool value = true;
};
template <class T>
    requires is_struct<T>
struct checked_node<T> {
    // A member outside BOOST_HANA_DEFINE_STRUCT would be reset to its default whenever a walk rebuilds
    // the struct: an aggregate accepting one initializer more than it reflects has such a member.
    static_assert(!std::is_aggregate_v<T> ||
                      !accepts_initializers<T>(std::make_index_sequence<reflected_count<T>() + 1>{}),
                  "remat::tree: this struct has a member (or a base) outside BOOST_HANA_DEFINE_STRUCT, which a walk "
                  "would silently reset to its default: list every member in BOOST_HANA_DEFINE_STRUCT (scalars such as "
                  "eps or gain too), or make it static");
    static constexpr bool value = true;
};

template <class T>
[[noreturn]] T unreachable() {
    std::abort();  // only after a failed static_assert: keeps the compiler to that one error
}

// Rebuilds a struct from its (mapped) members: a class template is re-deduced from them (CTAD), so
// wrapping a member's type changes the struct's type; a plain struct keeps its type.
template <class T>
struct rebuild_struct {
    template <class... M>
    static T from(M&&... members) {
        constexpr bool ok = requires { T{std::declval<M>()...}; };
        static_assert(ok,
                      "remat::tree: a walk changed the type of a member of a struct that is not a class template "
                      "(set_checkpointing wraps each block in Checkpointed<Block>): declare the struct with "
                      "REMAT_MODEL(Name, (Type, member)...) from remat/tree/model.hpp, or make it a class template "
                      "over that member's type with a deduction guide");
        if constexpr (ok)
            return T{std::forward<M>(members)...};
        else
            return unreachable<T>();
    }
};
template <template <class...> class Template, class... Args>
struct rebuild_struct<Template<Args...>> {
    template <class... M>
    static auto from(M&&... members) {
        constexpr bool ok = requires { Template{std::declval<M>()...}; };
        static_assert(ok,
                      "remat::tree: cannot rebuild a class template from its rewritten members: a member whose type "
                      "changed is not a template parameter, or the template lacks a deduction guide (clang needs "
                      "one: `template <class B> Net(B, ...) -> Net<B>;`); REMAT_MODEL declares both");
        if constexpr (ok)
            return Template{std::forward<M>(members)...};
        else
            return unreachable<Template<Args...>>();
    }
};

// x's child as x was passed: moved out of an rvalue, by (const) reference from an lvalue.
template <class X, class M>
decltype(auto) child(M& member) {
    if constexpr (std::is_rvalue_reference_v<X&&>)
        return std::move(member);
    else
        return (member);
}

template <class... R>
inline constexpr bool all_void = (std::is_void_v<R> && ...);

// f(segments[i], children[i]) for a fixed list of children (a std::tuple of references): nothing when
// f returns nothing, else the std::tuple of what it returned, evaluated in order.
template <class F, std::size_t N, class Children>
decltype(auto) map_fixed(F& f, const std::array<std::string_view, N>& segments, Children children) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
        using R = std::tuple<decltype(f(std::string(), std::get<I>(std::move(children))))...>;
        if constexpr (all_void<std::tuple_element_t<I, R>...>) {
            (f(std::string(segments[I]), std::get<I>(std::move(children))), ...);
        } else {
            static_assert(!(std::is_void_v<std::tuple_element_t<I, R>> || ...),
                          "remat::tree: f returns a value for some children and nothing for others");
            return R{f(std::string(segments[I]), std::get<I>(std::move(children)))...};
        }
    }(std::make_index_sequence<N>{});
}
}  // namespace detail

// THE primitive (Functors.jl's children half): f(segment, child) for each child of x, in declaration
// / index order, children passed with x's constness and value category (moved out of an rvalue).
// Returns what f returned — a std::tuple for a struct or a tuple, a std::vector for a vector, a
// std::optional for an optional, an empty tuple for a leaf — or nothing when f returns nothing.
template <class X, class F>
decltype(auto) map_children(X&& x, F&& f) {
    using T = bare<X>;
    static_assert(detail::checked_node<T>::value);
    if constexpr (is_struct<T>) {
        return hana::unpack(hana::accessors<T>(), [&](auto... pairs) -> decltype(auto) {
            constexpr bool hide = transparent_struct<T>;
            constexpr std::array<std::string_view, sizeof...(pairs)> segments{std::string_view(
                hide || flattened_member<decltype(hana::second(pairs)(x))>
                    ? ""
                    : hana::to<const char*>(bare<decltype(hana::first(pairs))>{}))...};
            return detail::map_fixed(f, segments, std::forward_as_tuple(detail::child<X>(hana::second(pairs)(x))...));
        });
    } else if constexpr (is_tuple<T>) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
            static const std::array<std::string, sizeof...(I)> names{std::to_string(I)...};
            const std::array<std::string_view, sizeof...(I)> segments{std::string_view(names[I])...};
            return detail::map_fixed(f, segments, std::forward_as_tuple(detail::child<X>(std::get<I>(x))...));
        }(std::make_index_sequence<std::tuple_size_v<T>>{});
    } else if constexpr (is_vector<T>) {
        using R = decltype(f(std::string(), detail::child<X>(x[0])));
        if constexpr (std::is_void_v<R>) {
            for (std::size_t i = 0; i < x.size(); ++i) f(std::to_string(i), detail::child<X>(x[i]));
        } else {
            std::vector<R> out;
            out.reserve(x.size());
            for (std::size_t i = 0; i < x.size(); ++i) out.push_back(f(std::to_string(i), detail::child<X>(x[i])));
            return out;
        }
    } else if constexpr (is_optional<T>) {
        using R = decltype(f(std::string(), detail::child<X>(*x)));
        if constexpr (std::is_void_v<R>) {
            if (x) f(std::string(), detail::child<X>(*x));
        } else {
            return x ? std::optional<R>(f(std::string(), detail::child<X>(*x))) : std::optional<R>();
        }
    } else {
        return std::tuple<>();  // a leaf has no children
    }
}

// The other half: x made again from map_children's results (from the mapped children, not from
// x, except for a leaf, which is x itself moved or copied). A class template is re-deduced.
template <class X, class Mapped>
auto rebuild(X&& x, Mapped&& mapped) {
    using T = bare<X>;
    if constexpr (is_struct<T>)
        return std::apply([](auto&&... m) { return detail::rebuild_struct<T>::from(std::move(m)...); },
                          std::forward<Mapped>(mapped));
    else if constexpr (has_children<T>)
        return bare<Mapped>(std::forward<Mapped>(mapped));  // tuple, vector, optional: the results are the node
    else
        return T(std::forward<X>(x));
}

// Calls f(segment, child) for each child of x, in declaration / index order. Works on const and
// mutable nodes alike (children are passed with x's constness).
template <class X, class F>
void for_each_child(X& x, F&& f) {
    map_children(x, [&](const std::string& segment, auto& c) { f(segment, c); });
}

// Rebuilds x from f(child, child_path) for each child, in order. From an rvalue the children are
// moved into f; from an lvalue they are passed by const reference (and opaque leaves copied). The
// result's type follows the children's new types.
template <class X, class F>
auto fmap_children(X&& x, F&& f, std::string_view path = "") {
    auto with_path = [&](const std::string& segment, auto&& c) -> decltype(auto) {
        return f(std::forward<decltype(c)>(c), join(path, segment));
    };
    if constexpr (std::is_rvalue_reference_v<X&&>) {
        auto mapped = map_children(std::move(x), with_path);
        return rebuild(std::move(x), std::move(mapped));
    } else {
        const auto& cx = x;
        return rebuild(cx, map_children(cx, with_path));
    }
}

// Functors.jl's children: a node's children by reference — a std::tuple of references for a struct
// or a tuple, the container itself for a vector or an optional, an empty tuple for a leaf. Their
// path segments, in the same order, come from child_segments(x).
template <class X>
decltype(auto) children(X& x) {
    if constexpr (is_vector<X> || is_optional<X>)
        return (x);
    else
        return map_children(x, [](const std::string&, auto& c) -> auto& { return c; });
}

template <class X>
std::vector<std::string> child_segments(X& x) {
    std::vector<std::string> segments;
    for_each_child(x, [&](const std::string& segment, auto&) { segments.push_back(segment); });
    return segments;
}

}  // namespace remat::tree
