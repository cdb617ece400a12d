#pragma once
// A model whose input is not token ids: a frame tagger over float features (sensor or audio frames,
// B × T × F), one label per frame. Added as docs/models.md says a new architecture is added — its
// structs, facts and config schema in its own folder — and registered in the table from the test
// tree: nothing outside this folder knows it. FrameTagger, model_type "frame_tagger".
//
//   batch: {"features": (B, T, F) float, "labels": (B, T) ids in [0, num_labels) or -100}
//   y = classifier(ln_f(blocks(in_proj(features))))  — logits (B, T, num_labels)
//   block: x + drop(fc2(gelu(fc1(ln(x)))))
#include <memory>
#include <vector>

#include "models/architecture.hpp"
#include "models/common/config_file.hpp"
#include "remat/checkpoint.hpp"
#include "remat/hf/naming.hpp"
#include "remat/layers/activation.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/layers/linear.hpp"
#include "remat/layers/norm.hpp"

namespace frames {

using namespace remat;

struct Config : models::ConfigFile<Config> {
    std::size_t num_features = 6, hidden_size = 16, num_layers = 3, num_labels = 4, max_frames = 32;
    double dropout = 0.1;
    static const config_json::Schema<Config>& schema();
};

struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::LayerNorm, ln), (nn::Linear, fc1), (nn::Linear, fc2), (nn::Dropout, drop));
    static constexpr const char* name = "FrameBlock";
    static constexpr bool is_block = true;
    Var operator()(const Var& x) const;
};

template <class B>
struct FrameTagger {
    BOOST_HANA_DEFINE_STRUCT(FrameTagger, (nn::Linear, in_proj), (std::vector<B>, blocks), (nn::LayerNorm, ln_f),
                             (nn::Linear, classifier));
    static constexpr const char* name = "FrameTagger";
    static const hf::Naming& hf_naming();

    Var operator()(const Tensor& features);  // (B, T, F) → logits (B, T, num_labels)
    Var loss(const Var& logits, const IdTensor& labels) const;  // per-frame cross-entropy, -100 ignored
};
template <class B>
FrameTagger(nn::Linear, std::vector<B>, nn::LayerNorm, nn::Linear) -> FrameTagger<B>;

using Model = FrameTagger<Block>;
Model create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng);

struct Facts {
    using Config = frames::Config;
    static constexpr const char* model_type = "frame_tagger";
    static constexpr const char* hf_class = "FrameTagger";
    static std::vector<std::string> also_loads() { return {}; }
    static constexpr const char* family = "Frame tagger";
    static constexpr auto objective = models::Objective::none;  // no text objective: `remat train` does not take it
    static constexpr auto tokenizer = models::TokenizerKind::none;
    // Sizes' five slots (layers, width, heads, vocabulary, positions) in this model's own terms.
    static constexpr std::array<const char*, 5> size_fields = {"num_layers", "hidden_size", "num_features", "num_labels",
                                                               "max_frames"};
    static constexpr std::array<std::size_t Config::*, 5> size_members = {
        &Config::num_layers, &Config::hidden_size, &Config::num_features, &Config::num_labels, &Config::max_frames};
    static Model create(const Config& c, Generator& init, std::shared_ptr<Generator> dropout_rng) {
        return frames::create(c, init, std::move(dropout_rng));
    }
    static models::Summary summary(const Config& c);
    template <class M>
    static Var logits(M& model, const data::Batch& in) {
        return model(in.value("features"));
    }
};

void register_once();  // adds FrameTagger to the table (later calls do nothing)

}  // namespace frames
