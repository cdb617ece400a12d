#pragma once
// Parameters and buffers by dotted path ("transformer.h.3.attn.c_attn.weight").
#include <string>
#include <utility>
#include <vector>

#include "remat/tree/walk.hpp"

namespace remat::tree {

// f(path, Param&) for every parameter, in declaration order, each exactly once.
template <class X, class F>
void foreach_parameter(X& x, F&& f) {
    visit(x, [&](auto& node, const std::string& path) {
        if constexpr (is_param<decltype(node)>) f(path, node);
    });
}

// f(path, Tensor&) for every parameter's value and every buffer: the model's whole saved state.
template <class X, class F>
void foreach_tensor(X& x, F&& f) {
    visit(x, [&](auto& node, const std::string& path) {
        if constexpr (is_param<decltype(node)>)
            f(path, node.value);
        else if constexpr (is_buffer<decltype(node)>)
            f(path, node);
    });
}

template <class X>
auto parameters(X& x) {
    std::vector<std::conditional_t<std::is_const_v<X>, const Param*, Param*>> out;
    foreach_parameter(x, [&](const std::string&, auto& p) { out.push_back(&p); });
    return out;
}

template <class X>
auto named_parameters(X& x) {
    std::vector<std::pair<std::string, std::conditional_t<std::is_const_v<X>, const Param*, Param*>>> out;
    foreach_parameter(x, [&](const std::string& path, auto& p) { out.emplace_back(path, &p); });
    return out;
}

// Number of scalar parameters (frozen ones included, buffers not), as HF's num_parameters().
template <class X>
std::size_t count_parameters(const X& x) {
    std::size_t n = 0;
    foreach_parameter(x, [&](const std::string&, const Param& p) { n += p.size(); });
    return n;
}

}  // namespace remat::tree
