#include <doctest/doctest.h>

#include <set>

#include "remat/layers.hpp"
#include "remat/tree/model.hpp"
#include "remat/tree/parameters.hpp"
#include "remat/tree/show.hpp"
#include "remat/tree/walk.hpp"

using namespace remat;

namespace {
// A transformer-shaped toy: class templates over their child types, as models are.
template <class Attn, class Mlp>
struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::LayerNorm, ln_1), (Attn, attn), (Mlp, mlp), (float, scale));
    static constexpr const char* name = "Block";
};
template <class Attn, class Mlp>
Block(nn::LayerNorm, Attn, Mlp, float) -> Block<Attn, Mlp>;

template <class B>
struct Model {
    BOOST_HANA_DEFINE_STRUCT(Model, (nn::Embedding, wte), (std::vector<B>, h), (std::optional<nn::LayerNorm>, ln_f),
                             (int, n_layer));
    static constexpr const char* name = "Model";
};
template <class B>
Model(nn::Embedding, std::vector<B>, std::optional<nn::LayerNorm>, int) -> Model<B>;

// A transparent wrapper, as Checkpointed<T> is: it adds no path segment.
template <class T>
struct Wrapped {
    BOOST_HANA_DEFINE_STRUCT(Wrapped, (T, inner));
    static constexpr bool transparent = true;
};
template <class T>
Wrapped(T) -> Wrapped<T>;

// An opaque leaf that prints through the customisation point: to_string found by ADL.
enum class Colour { red, green };
std::string to_string(Colour c) { return c == Colour::red ? "red" : "green"; }

struct Painted {
    BOOST_HANA_DEFINE_STRUCT(Painted, (nn::LayerNorm, ln), (Colour, colour));
    static constexpr const char* name = "Painted";
};

// A plain model whose member types walks may still change.
REMAT_MODEL(Plain, (nn::Linear, embed), (nn::LayerNorm, norm), (std::vector<nn::Linear>, hidden), (float, gain))
    static constexpr const char* name = "Plain";
    Var operator()(const Var& x) const { return embed(x) * gain; }
};

auto make_model(std::size_t layers = 3) {
    Generator rng(1);
    using Mlp = nn::Chain<nn::Linear, nn::GeluTanh, nn::Linear>;
    using B = Block<nn::MultiHeadAttention, Mlp>;
    std::vector<B> h;
    for (std::size_t i = 0; i < layers; ++i)
        h.push_back(B{nn::LayerNorm::create(8), nn::MultiHeadAttention::create(8, 2, rng, true),
                      nn::chain(nn::Linear::create(8, 16, rng), nn::gelu_tanh, nn::Linear::create(16, 8, rng)), 0.5f});
    return Model<B>{nn::Embedding::create(11, 8, rng), std::move(h), nn::LayerNorm::create(8, 1e-6f), 3};
}
}  // namespace

TEST_CASE("traversal") {
    auto model = make_model();

    SUBCASE("visits every parameter exactly once, with its dotted path") {
        auto named = tree::named_parameters(model);
        std::vector<std::string> paths;
        for (auto& [path, p] : named) paths.push_back(path);
        const std::vector<std::string> first_block = {
            "h.0.ln_1.weight",         "h.0.ln_1.bias",          "h.0.attn.in_proj.weight", "h.0.attn.in_proj.bias",
            "h.0.attn.out_proj.weight", "h.0.attn.out_proj.bias", "h.0.mlp.layers.0.weight", "h.0.mlp.layers.0.bias",
            "h.0.mlp.layers.2.weight", "h.0.mlp.layers.2.bias"};
        REQUIRE(paths.size() == 1 + 3 * 10 + 2);
        CHECK(paths.front() == "wte.weight");
        CHECK(std::vector<std::string>(paths.begin() + 1, paths.begin() + 11) == first_block);
        CHECK(paths[21] == "h.2.ln_1.weight");
        CHECK(paths.back() == "ln_f.bias");
        std::set<const Param*> distinct;
        for (auto& [path, p] : named) distinct.insert(p);
        CHECK(distinct.size() == paths.size());
        // 11·8 + 3·(2·8 + (8·24 + 24) + (8·8 + 8) + (8·16 + 16) + (16·8 + 8)) + 2·8
        CHECK(tree::count_parameters(model) == 88 + 3 * (16 + 216 + 72 + 144 + 136) + 16);
    }

    SUBCASE("children") {
        auto [wte, h, ln_f, n_layer] = tree::children(model);
        CHECK(&h == &model.h);
        CHECK(n_layer == 3);
        CHECK(tree::child_segments(model) == std::vector<std::string>{"wte", "h", "ln_f", "n_layer"});
        CHECK(tree::child_segments(model.h) == std::vector<std::string>{"0", "1", "2"});
        CHECK(std::tuple_size_v<decltype(tree::children(model.n_layer))> == 0);
    }

    SUBCASE("an empty optional has no parameters") {
        model.ln_f.reset();
        CHECK(tree::named_parameters(model).back().first == "h.2.mlp.layers.2.bias");
    }

    SUBCASE("postwalk wraps blocks, changing the model's type, keeping values, paths and scalars") {
        using B = std::decay_t<decltype(model.h[0])>;
        const auto before = tree::named_parameters(model);
        std::vector<std::string> paths_before;
        for (auto& [path, p] : before) paths_before.push_back(path);
        const float w = model.h[1].attn.in_proj.weight.value(2, 3);
        const float* storage = model.h[1].attn.in_proj.weight.value.data();
        std::vector<std::string> wrapped_at;
        auto wrapped = tree::postwalk(
            [&](auto&& node, const std::string& path) {
                if constexpr (std::is_same_v<tree::bare<decltype(node)>, B>) {
                    wrapped_at.push_back(path);
                    return Wrapped{std::move(node)};
                } else {
                    return std::move(node);
                }
            },
            std::move(model));
        static_assert(std::is_same_v<decltype(wrapped), Model<Wrapped<B>>>);
        CHECK(wrapped_at == std::vector<std::string>{"h.0", "h.1", "h.2"});
        CHECK(wrapped.h[1].inner.attn.in_proj.weight.value(2, 3) == w);
        CHECK(wrapped.h[1].inner.attn.in_proj.weight.value.data() == storage);  // moved, never copied
        CHECK(wrapped.h[2].inner.scale == 0.5f);
        CHECK(wrapped.n_layer == 3);
        CHECK(wrapped.ln_f->eps == 1e-6f);
        std::vector<std::string> paths_after;
        for (auto& [path, p] : tree::named_parameters(wrapped)) paths_after.push_back(path);
        CHECK(paths_after == paths_before);

        // And back: unwrapping restores the original type.
        auto unwrapped = tree::postwalk(
            [](auto&& node) {
                if constexpr (std::is_same_v<tree::bare<decltype(node)>, Wrapped<B>>)
                    return std::move(node.inner);
                else
                    return std::move(node);
            },
            std::move(wrapped));
        static_assert(std::is_same_v<decltype(unwrapped), Model<B>>);
        CHECK(unwrapped.h[1].attn.in_proj.weight.value.data() == storage);
    }

    SUBCASE("prewalk sees a node before its children") {
        std::vector<std::string> order;
        auto same = tree::prewalk(
            [&](auto&& node, const std::string& path) {
                if constexpr (tree::is_struct<decltype(node)>) order.push_back(path);
                return std::move(node);
            },
            std::move(model));
        CHECK(order[0] == "");
        CHECK(order[1] == "wte");
        CHECK(order[2] == "h.0");
        CHECK(order[3] == "h.0.ln_1");
        CHECK(same.n_layer == 3);
    }

    SUBCASE("fmap rewrites leaves") {
        auto doubled = tree::fmap(
            [](auto&& leaf) {
                if constexpr (tree::is_param<decltype(leaf)>) leaf.value *= 2.0f;
                return std::move(leaf);
            },
            std::move(model));
        CHECK(doubled.ln_f->weight.value(0) == 2.0f);
    }

    SUBCASE("map_leaves builds a mirror from a const model without touching it") {
        const auto& m = model;
        auto shapes = tree::map_leaves(m, [](const auto& leaf) {
            if constexpr (tree::is_param<decltype(leaf)>)
                return Param{zeros(leaf.shape())};
            else
                return leaf;
        });
        static_assert(std::is_same_v<decltype(shapes), decltype(model)>);
        CHECK(std::get<0>(shapes.h[0].mlp.layers).weight.shape() == std::get<0>(model.h[0].mlp.layers).weight.shape());
        CHECK(shapes.h[0].ln_1.weight.value(0) == 0.0f);
        CHECK(model.h[0].ln_1.weight.value(0) == 1.0f);
    }

    SUBCASE("printing") {
        const std::string text = tree::summary(model);
        CHECK(text.find("Model(\n") == 0);
        CHECK(text.find("  wte: Embedding(11 => 8)") != std::string::npos);
        CHECK(text.find("  h: [\n") != std::string::npos);
        CHECK(text.find("    0: Block(\n") != std::string::npos);
        CHECK(text.find("      mlp: Chain(\n        layers.0: Linear(8 => 16)") != std::string::npos);
        CHECK(text.find("        layers.1: gelu_tanh\n") != std::string::npos);
        CHECK(text.find("        causal: true\n") != std::string::npos);
        CHECK(text.find("# 136 parameters") != std::string::npos);
        CHECK(text.find("total: 33 arrays, " + std::to_string(tree::count_parameters(model)) + " parameters") !=
              std::string::npos);
    }
}

TEST_CASE("the primitive: map_children and rebuild") {
    auto model = make_model(2);

    SUBCASE("map_children gives f's results per node kind, in order, with segments") {
        std::vector<std::string> segments;
        auto sizes = tree::map_children(model, [&](const std::string& segment, const auto& child) {
            segments.push_back(segment);
            return tree::count_parameters(child);
        });
        static_assert(std::is_same_v<decltype(sizes), std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>>);
        CHECK(segments == std::vector<std::string>{"wte", "h", "ln_f", "n_layer"});
        CHECK(std::get<0>(sizes) == 88);
        CHECK(std::get<2>(sizes) == 16);
        auto per_block = tree::map_children(model.h, [](const std::string& segment, const auto&) { return segment; });
        CHECK(per_block == std::vector<std::string>{"0", "1"});
        auto inside = tree::map_children(model.ln_f, [](const std::string& segment, const auto& ln) { return segment + std::to_string(ln.eps); });
        static_assert(std::is_same_v<decltype(inside), std::optional<std::string>>);
        CHECK(inside == std::optional<std::string>("0.000001"));
        CHECK(std::tuple_size_v<decltype(tree::map_children(model.n_layer, [](const std::string&, auto&) { return 0; }))> == 0);
    }

    SUBCASE("rebuild re-deduces a class template from the mapped children") {
        using B = std::decay_t<decltype(model.h[0])>;
        auto mapped = tree::map_children(std::move(model), [](const std::string&, auto&& child) {
            if constexpr (tree::is_vector<decltype(child)>) {
                std::vector<Wrapped<B>> h;
                for (auto& b : child) h.push_back(Wrapped{std::move(b)});
                return h;
            } else {
                return std::move(child);
            }
        });
        auto rebuilt = tree::rebuild(std::move(model), std::move(mapped));
        static_assert(std::is_same_v<decltype(rebuilt), Model<Wrapped<B>>>);
        CHECK(rebuilt.n_layer == 3);
        CHECK(rebuilt.h.size() == 2);
    }

    SUBCASE("a leaf rebuilds as itself") {
        int n = 4;
        CHECK(tree::rebuild(n, tree::map_children(n, [](const std::string&, int) { return 0; })) == 4);
    }
}

TEST_CASE("show prints an opaque leaf through to_string found by argument-dependent lookup") {
    Painted p{nn::LayerNorm::create(2), Colour::green};
    const std::string text = tree::summary(p);
    CHECK(text.find("  colour: green\n") != std::string::npos);
    CHECK(tree::summary(nn::Dropout::create(0.5f)).find("mode=automatic") != std::string::npos);
}

TEST_CASE("REMAT_MODEL: a plain model whose member types a walk can change") {
    Generator rng(3);
    std::vector<nn::Linear> hidden;
    hidden.push_back(nn::Linear::create(4, 4, rng));
    Plain plain{nn::Linear::create(2, 4, rng), nn::LayerNorm::create(4), std::move(hidden), 3.0f};
    static_assert(std::is_same_v<Plain, BasicPlain<>>);
    static_assert(std::is_same_v<decltype(plain.gain), float>);
    CHECK(tree::child_segments(plain) == std::vector<std::string>{"embed", "norm", "hidden", "gain"});
    const std::string printed = tree::summary(plain);
    CHECK(printed.find("Plain(\n  embed: Linear(2 => 4)") == 0);
    const float* storage = plain.embed.weight.value.data();

    auto wrapped = tree::postwalk(
        [](auto&& node) {
            if constexpr (std::is_same_v<tree::bare<decltype(node)>, nn::Linear>)
                return Wrapped{std::move(node)};
            else
                return std::move(node);
        },
        std::move(plain));
    static_assert(std::is_same_v<decltype(wrapped), BasicPlain<Wrapped<nn::Linear>, nn::LayerNorm, std::vector<Wrapped<nn::Linear>>, float>>);
    CHECK(wrapped.gain == 3.0f);  // every member is reflected: nothing resets
    CHECK(wrapped.embed.inner.weight.value.data() == storage);
    CHECK(tree::named_parameters(wrapped).front().first == "embed.weight");
    CHECK(tree::named_parameters(wrapped).back().first == "hidden.0.bias");

    auto back = tree::postwalk(
        [](auto&& node) {
            if constexpr (std::is_same_v<tree::bare<decltype(node)>, Wrapped<nn::Linear>>)
                return std::move(node.inner);
            else
                return std::move(node);
        },
        std::move(wrapped));
    static_assert(std::is_same_v<decltype(back), Plain>);
    CHECK(tree::summary(back) == printed);
}
