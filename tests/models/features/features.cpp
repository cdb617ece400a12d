#include "tests/models/features/features.hpp"

#include "models/architecture_of.hpp"
#include "models/common/config_schema.hpp"
#include "remat/ops.hpp"

namespace frames {

using namespace config_json;

const Schema<Config>& Config::schema() {
    static const Schema<Config> s = Schema<Config>("frame tagger config", "frame_tagger", "FrameTagger")
                                        .size("num_features", &Config::num_features, Rule::positive).required()
                                        .size("hidden_size", &Config::hidden_size, Rule::positive).required()
                                        .size("num_layers", &Config::num_layers).required()
                                        .size("num_labels", &Config::num_labels, Rule::positive).required()
                                        .size("max_frames", &Config::max_frames, Rule::positive)
                                        .real("dropout", &Config::dropout, Rule::probability);
    return s;
}

Var Block::operator()(const Var& x) const {
    return x + drop(nn::call("fc2", fc2, ops::gelu_erf(nn::call("fc1", fc1, nn::call("ln", ln, x)))));
}

template <class B>
const hf::Naming& FrameTagger<B>::hf_naming() {
    static const hf::Naming naming{"tagger.", {}, {}};
    return naming;
}

template <class B>
Var FrameTagger<B>::operator()(const Tensor& features) {
    if (features.dimension() != 3 || features.shape()[2] != in_proj.weight.value.shape()[1])
        throw ShapeError("frame tagger: features must be (B, T, " + std::to_string(in_proj.weight.value.shape()[1]) +
                         "), got " + to_string(features.shape()));
    Var x = nn::call("in_proj", in_proj, Var(features));
    return nn::call("classifier", classifier, nn::call("ln_f", ln_f, run_blocks(blocks, "blocks", x)));
}

template <class B>
Var FrameTagger<B>::loss(const Var& logits, const IdTensor& labels) const {
    return ops::cross_entropy(logits, labels);
}
template struct FrameTagger<Block>;
template struct FrameTagger<Checkpointed<Block>>;

Model create(const Config& c, Generator& init, std::shared_ptr<Generator> rng) {
    auto in_proj = nn::Linear::create(c.num_features, c.hidden_size, init);
    std::vector<Block> blocks;
    for (std::size_t i = 0; i < c.num_layers; ++i) {
        auto fc1 = nn::Linear::create(c.hidden_size, 4 * c.hidden_size, init);
        auto fc2 = nn::Linear::create(4 * c.hidden_size, c.hidden_size, init);
        blocks.push_back(Block{nn::LayerNorm::create(c.hidden_size), std::move(fc1), std::move(fc2),
                               nn::Dropout::create(static_cast<float>(c.dropout), rng)});
    }
    auto classifier = nn::Linear::create(c.hidden_size, c.num_labels, init);
    return Model{std::move(in_proj), std::move(blocks), nn::LayerNorm::create(c.hidden_size), std::move(classifier)};
}

models::Summary Facts::summary(const Config& c) { return {models::sizes_of(c, size_members), 0, c.dropout}; }

void register_once() {
    static const bool done = [] {
        models::register_architecture(models::architecture_of<Facts>());
        return true;
    }();
    (void)done;
}

}  // namespace frames

template struct remat::models::ConfigFile<frames::Config>;
