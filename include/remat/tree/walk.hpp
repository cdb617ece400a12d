#pragma once
// Whole-tree rewrites, as Functors.jl's fmap / postwalk / prewalk. The model is taken by value and
// moved through, never copied; f may return a different type (wrapping a block in Checkpointed<T>),
// and every struct above it is re-deduced accordingly.
//
// f is called as f(node, path) when it accepts a path (the dotted path of the node), else f(node).
#include "remat/tree/node.hpp"

namespace remat::tree {

namespace detail {
template <class F, class X>
decltype(auto) call_with_path(F& f, X&& x, const std::string& path) {
    if constexpr (std::is_invocable_v<F&, X&&, const std::string&>)
        return f(std::forward<X>(x), path);
    else
        return f(std::forward<X>(x));
}
}  // namespace detail

// f applied to every node bottom-up: children first, then the node rebuilt from them.
template <class X, class F>
auto postwalk(F&& f, X&& x, const std::string& path = "") {
    static_assert(std::is_rvalue_reference_v<X&&>, "postwalk moves the model: pass it with std::move");
    auto rebuilt = fmap_children(std::move(x), [&](auto&& child, const std::string& p) {
        return postwalk(f, std::move(child), p);
    }, path);
    return detail::call_with_path(f, std::move(rebuilt), path);
}

// f applied to every node top-down: the node first, then the children of what f returned.
template <class X, class F>
auto prewalk(F&& f, X&& x, const std::string& path = "") {
    static_assert(std::is_rvalue_reference_v<X&&>, "prewalk moves the model: pass it with std::move");
    auto replaced = detail::call_with_path(f, std::move(x), path);
    return fmap_children(std::move(replaced), [&](auto&& child, const std::string& p) {
        return prewalk(f, std::move(child), p);
    }, path);
}

// f applied to every leaf (Param, Tensor, and opaque leaves), structure kept.
template <class X, class F>
auto fmap(F&& f, X&& x, const std::string& path = "") {
    static_assert(std::is_rvalue_reference_v<X&&>, "fmap moves the model: pass it with std::move");
    if constexpr (has_children<X>)
        return fmap_children(std::move(x), [&](auto&& child, const std::string& p) {
            return fmap(f, std::move(child), p);
        }, path);
    else
        return detail::call_with_path(f, std::move(x), path);
}

// Visits every node top-down, mutably or not: f(node, path). Children of transparent nodes keep
// their parent's path.
template <class X, class F>
void visit(X& x, F&& f, const std::string& path = "") {
    detail::call_with_path(f, x, path);
    for_each_child(x, [&](const std::string& segment, auto& child) { visit(child, f, join(path, segment)); });
}

}  // namespace remat::tree

namespace remat::tree {

// A new tree of the same structure, built from a const model without copying its tensors:
// f(leaf, path) gives each leaf's replacement (Param, Tensor and opaque leaves alike).
template <class X, class F>
auto map_leaves(const X& x, F&& f, const std::string& path = "") {
    if constexpr (has_children<X>)
        return fmap_children(x, [&](const auto& child, const std::string& p) { return map_leaves(child, f, p); }, path);
    else
        return detail::call_with_path(f, x, path);
}

}  // namespace remat::tree
