#pragma once
// BERT as in HuggingFace transformers (modeling_bert.py), field for field, so that parameter paths
// are HF's names: bert.encoder.layer.3.attention.self.query.weight.
//
//   BertEmbeddings:  LayerNorm(word[ids] + position[0..T-1] + token_type[type_ids]), dropout
//   BertLayer (post-LN):
//     attention.self:    softmax(q·kᵀ/√D + padding mask) · v per head
//     attention.output:  a = LayerNorm(dropout(dense(ctx)) + x)
//     intermediate:      i = gelu(dense(a))          (exact erf GELU)
//     output:            y = LayerNorm(dropout(dense(i)) + a)
//   BertModel:            encoder(embeddings(ids)); pooler = tanh(dense(first token)) when present
//   BertForMaskedLM:      cls.predictions: LayerNorm(gelu(transform.dense(y))) · word_embeddingsᵀ + bias
#include <memory>
#include <optional>
#include <vector>

#include "models/bert/config.hpp"
#include "remat/checkpoint.hpp"
#include "remat/hf/naming.hpp"
#include "remat/layers/attention.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/layers/embedding.hpp"
#include "remat/layers/linear.hpp"
#include "remat/layers/norm.hpp"

namespace remat::bert {

using nn::given;
using nn::padding_mask;
using nn::PaddingMask;

// How HF's BERT checkpoints name tensors beyond the model's paths: the base prefix "bert.", the
// masked-LM decoder tied to the word embeddings (cls.predictions.decoder.*), and the
// embeddings.position_ids buffer.
const hf::Naming& checkpoint_naming();

struct Embeddings {
    BOOST_HANA_DEFINE_STRUCT(Embeddings, (nn::Embedding, word_embeddings), (nn::Embedding, position_embeddings),
                             (nn::Embedding, token_type_embeddings), (nn::LayerNorm, LayerNorm), (nn::Dropout, dropout));
    static constexpr const char* name = "BertEmbeddings";
    // token_type_ids may be empty: all zeros, as in HF.
    Var operator()(const IdTensor& ids, const IdTensor& token_type_ids) const;
};

struct SelfAttention {
    BOOST_HANA_DEFINE_STRUCT(SelfAttention, (nn::Linear, query), (nn::Linear, key), (nn::Linear, value),
                             (nn::Dropout, dropout), (std::size_t, num_attention_heads));
    static constexpr const char* name = "BertSelfAttention";
    Var operator()(const Var& x, const PaddingMask& mask) const;
};

// dense → dropout → LayerNorm(· + residual): BertSelfOutput and BertOutput.
struct ResidualOutput {
    BOOST_HANA_DEFINE_STRUCT(ResidualOutput, (nn::Linear, dense), (nn::LayerNorm, LayerNorm), (nn::Dropout, dropout));
    static constexpr const char* name = "BertOutput";
    Var operator()(const Var& x, const Var& residual) const;
};

struct Attention {
    BOOST_HANA_DEFINE_STRUCT(Attention, (SelfAttention, self), (ResidualOutput, output));
    static constexpr const char* name = "BertAttention";
    Var operator()(const Var& x, const PaddingMask& mask) const;
};

struct Intermediate {
    BOOST_HANA_DEFINE_STRUCT(Intermediate, (nn::Linear, dense), (Activation, act));
    static constexpr const char* name = "BertIntermediate";
    Var operator()(const Var& x) const;
};

struct Layer {
    BOOST_HANA_DEFINE_STRUCT(Layer, (Attention, attention), (Intermediate, intermediate), (ResidualOutput, output));
    static constexpr const char* name = "BertLayer";
    static constexpr bool is_block = true;  // set_checkpointing wraps these

    static Layer create(const Config& config, Generator& init, const std::shared_ptr<Generator>& dropout_rng);
    Var operator()(const Var& x, const PaddingMask& mask) const;
};

template <class L>
struct Encoder {
    BOOST_HANA_DEFINE_STRUCT(Encoder, (std::vector<L>, layer));
    static constexpr const char* name = "BertEncoder";
    Var operator()(const Var& x, const PaddingMask& mask) { return run_blocks(layer, "layer", x, mask); }
};
template <class L>
Encoder(std::vector<L>) -> Encoder<L>;

struct Pooler {
    BOOST_HANA_DEFINE_STRUCT(Pooler, (nn::Linear, dense));
    static constexpr const char* name = "BertPooler";
    Var operator()(const Var& hidden) const;  // (B, T, H) -> tanh(dense(hidden[:, 0])) (B, H)
};

struct Inputs {
    IdTensor input_ids;       // (B, T)
    IdTensor token_type_ids;  // (B, T), or default-constructed (0-d): all zeros
    IdTensor attention_mask;  // (B, T) of 1/0, or default-constructed (0-d): attend everywhere
};


template <class L>
struct BertModel {
    BOOST_HANA_DEFINE_STRUCT(BertModel, (Embeddings, embeddings), (Encoder<L>, encoder), (std::optional<Pooler>, pooler));
    static constexpr const char* name = "BertModel";
    static const hf::Naming& hf_naming() { return checkpoint_naming(); }

    // Sequence output (B, T, H).
    Var operator()(const Inputs& in) {
        check_inputs(in);
        Var x = REMAT_CALL(embeddings, in.input_ids, in.token_type_ids);
        const PaddingMask mask = given(in.attention_mask) ? padding_mask(in.attention_mask) : nullptr;
        return REMAT_CALL(encoder, x, mask);
    }
    void check_inputs(const Inputs& in) const;
};
template <class L>
BertModel(Embeddings, Encoder<L>, std::optional<Pooler>) -> BertModel<L>;

struct PredictionTransform {
    BOOST_HANA_DEFINE_STRUCT(PredictionTransform, (nn::Linear, dense), (nn::LayerNorm, LayerNorm), (Activation, act));
    static constexpr const char* name = "BertPredictionHeadTransform";
    Var operator()(const Var& x) const;
};

struct Predictions {  // the decoder is tied to the word embeddings: only its bias is a member
    BOOST_HANA_DEFINE_STRUCT(Predictions, (PredictionTransform, transform), (Param, bias));
    static constexpr const char* name = "BertLMPredictionHead";
    Var operator()(const Var& x, const nn::Embedding& word_embeddings) const;
};

struct MLMHead {
    BOOST_HANA_DEFINE_STRUCT(MLMHead, (Predictions, predictions));
    static constexpr const char* name = "BertOnlyMLMHead";
};

template <class L>
struct BertForMaskedLM {
    BOOST_HANA_DEFINE_STRUCT(BertForMaskedLM, (BertModel<L>, bert), (MLMHead, cls));
    static constexpr const char* name = "BertForMaskedLM";
    static const hf::Naming& hf_naming() { return checkpoint_naming(); }

    // Logits (B, T, V).
    Var operator()(const Inputs& in) {
        Var hidden = REMAT_CALL(bert, in);
        return REMAT_CALL(cls.predictions, hidden, bert.embeddings.word_embeddings);
    }
    // Mean cross-entropy over labels ≠ -100 (no shift).
    Var loss(const Var& logits, const IdTensor& labels) const;
};
template <class L>
BertForMaskedLM(BertModel<L>, MLMHead) -> BertForMaskedLM<L>;

using Model = BertForMaskedLM<Layer>;
using BaseModel = BertModel<Layer>;

// Freshly initialised as HF does: weights N(0, initializer_range), biases 0, LayerNorm 1 and 0.
// Dropouts draw from dropout_rng (the shared default generator when null).
Model create(const Config& config, Generator& init, std::shared_ptr<Generator> dropout_rng = nullptr);
BaseModel create_base(const Config& config, Generator& init, std::shared_ptr<Generator> dropout_rng = nullptr,
                      bool with_pooler = true);

void check_inputs(const Embeddings& embeddings, const Inputs& in);
Var masked_lm_loss(const Var& logits, const IdTensor& labels);

template <class L>
void BertModel<L>::check_inputs(const Inputs& in) const {
    bert::check_inputs(embeddings, in);
}
template <class L>
Var BertForMaskedLM<L>::loss(const Var& logits, const IdTensor& labels) const {
    return masked_lm_loss(logits, labels);
}

}  // namespace remat::bert
