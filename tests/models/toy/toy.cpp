#include "tests/models/toy/toy.hpp"

#include "models/architecture_of.hpp"
#include "models/common/config_schema.hpp"
#include "remat/ops.hpp"

namespace toy {

using namespace config_json;

const Schema<Config>& Config::schema() {
    static const Schema<Config> s = Schema<Config>("toy config", "toy", "ToyLMHeadModel")
                                        .size("vocab_size", &Config::vocab_size, Rule::positive).required()
                                        .size("n_embd", &Config::n_embd, Rule::positive).required()
                                        .size("n_layer", &Config::n_layer).required()
                                        .size("n_head", &Config::n_head, Rule::positive)
                                        .size("n_positions", &Config::n_positions, Rule::positive)
                                        .real("dropout", &Config::dropout, Rule::probability)
                                        .real("initializer_range", &Config::initializer_range)
                                        .activation("activation", &Config::activation)
                                        .check([](const Config& c, const std::string& what) {
                                            if (c.n_embd % c.n_head != 0)
                                                throw ValueError(what + ": n_embd must divide by n_head");
                                        });
    return s;
}

Var Block::operator()(const Var& x) const {
    Var a = nn::self_attention(nn::call("qkv", qkv, x), n_head, {.causal = true}, nullptr);
    return x + drop(nn::call("proj", proj, nn::apply(act, a)));
}

template <class B>
const hf::Naming& ToyLMHeadModel<B>::hf_naming() {
    static const hf::Naming naming{"toy.", {"tied_head.weight"}, {".rotary_cache"}};
    return naming;
}

template <class B>
Var ToyLMHeadModel<B>::embed(const IdTensor& ids) const {
    const std::size_t T = ids.shape()[1];
    IdTensor positions = IdTensor::from_shape({T});
    for (std::size_t t = 0; t < T; ++t) positions(t) = static_cast<std::int64_t>(t);
    return nn::call("wte", wte, ids) + nn::call("wpe", wpe, positions);
}
template <class B>
Var ToyLMHeadModel<B>::loss(const Var& logits, const IdTensor& labels) const {
    return ops::next_token_cross_entropy(logits, labels);
}
template struct ToyLMHeadModel<Block>;
template struct ToyLMHeadModel<Checkpointed<Block>>;

Model create(const Config& c, Generator& init, std::shared_ptr<Generator> rng) {
    const auto std_ = static_cast<float>(c.initializer_range);
    auto wte = nn::Embedding::create(c.vocab_size, c.n_embd, init, std_);
    auto wpe = nn::Embedding::create(c.n_positions, c.n_embd, init, std_);
    std::vector<Block> h;
    for (std::size_t i = 0; i < c.n_layer; ++i) {
        auto qkv = nn::Linear::create(c.n_embd, 3 * c.n_embd, init);
        auto proj = nn::Linear::create(c.n_embd, c.n_embd, init);
        h.push_back(Block{std::move(qkv), std::move(proj), nn::Dropout::create(static_cast<float>(c.dropout), rng),
                          c.activation, c.n_head});
    }
    auto head = nn::Linear::create(c.n_embd, c.vocab_size, init, false);
    return Model{std::move(wte), std::move(wpe), std::move(h), std::move(head)};
}

models::Summary Facts::summary(const Config& c) { return {models::sizes_of(c, size_members), 0, c.dropout}; }

void register_once() {
    static const bool done = [] {
        models::register_architecture(models::architecture_of<Facts>());
        return true;
    }();
    (void)done;
}

}  // namespace toy

template struct remat::models::ConfigFile<toy::Config>;
