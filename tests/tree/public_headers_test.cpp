// <remat/remat.hpp> alone gives everything public: this file includes nothing else (it is compiled
// without the precompiled header) and names one symbol of each public header, each under a comment
// with the header's path; tests/tree/public_headers.py checks that every header under include/remat/
// has its line here and its #include in remat.hpp. Compiling is the test.
#include <remat/remat.hpp>

namespace r = remat;
template <class T>
constexpr bool known = sizeof(T) > 0;  // T is a complete type

static_assert(known<r::ad::OpKind>);                // remat/ad/backend.hpp
static_assert(known<r::ad::FiniteDifference>);      // remat/ad/finite_difference.hpp
static_assert(known<r::ad::Tape>);                  // remat/ad/tape.hpp
static_assert(known<r::Var>);                       // remat/ad/var.hpp
static_assert(known<r::CheckpointOptions>);         // remat/checkpoint.hpp
static_assert(known<r::Anchor<int>>);               // remat/core/anchor.hpp
static_assert(known<r::Error>);                     // remat/core/error.hpp
static_assert(known<r::ReadableFile>);              // remat/core/files.hpp
static_assert(known<r::Param>);                     // remat/core/param.hpp
static_assert(known<r::Generator>);                 // remat/core/random.hpp
static_assert(known<r::Tensor>);                    // remat/core/tensor.hpp
static_assert(known<r::data::TokenCorpus>);         // remat/data/corpus.hpp
static_assert(known<r::data::Batch>);               // remat/data/dataset.hpp
static_assert(known<r::data::EncodeProgress>);      // remat/data/encode.hpp
static_assert(known<r::data::EpochOrder>);          // remat/data/epoch_order.hpp
static_assert(known<r::data::MaskingRule>);         // remat/data/masking.hpp
static_assert(known<r::data::PackedExamples>);      // remat/data/packing.hpp
static_assert(known<r::data::SupervisedExample>);   // remat/data/supervised.hpp
static_assert(known<r::data::TokenFile>);           // remat/data/token_file.hpp
static_assert(known<r::dist::GradientReducer>);     // remat/dist/gradient_reducer.hpp
static_assert(known<decltype(&r::dist::owners_by_elements)>);  // remat/dist/shards.hpp
static_assert(known<r::dist::World>);               // remat/dist/world.hpp
static_assert(known<r::generation::Options>);       // remat/generation/generate.hpp
static_assert(known<r::generation::FolderSettings>);// remat/generation/generation_config.hpp
static_assert(known<r::generation::Sampling>);      // remat/generation/sampling.hpp
static_assert(known<r::hf::FormatError>);           // remat/hf/error.hpp
static_assert(known<r::hf::LoadReport>);            // remat/hf/load.hpp
static_assert(known<r::hf::Naming>);                // remat/hf/naming.hpp
static_assert(known<r::hf::PytorchBinFile>);        // remat/hf/pytorch_bin.hpp
static_assert(known<r::hf::DType>);                 // remat/hf/safetensors.hpp
static_assert(known<r::hf::WeightFiles>);           // remat/hf/weight_files.hpp
static_assert(known<r::nn::GeluTanh>);              // remat/layers/activation.hpp
static_assert(known<r::nn::Add>);                   // remat/layers/chain.hpp
static_assert(known<r::nn::Dropout>);               // remat/layers/dropout.hpp
static_assert(known<r::nn::Embedding>);             // remat/layers/embedding.hpp
static_assert(known<r::nn::KVCache>);               // remat/layers/kv_cache.hpp
static_assert(known<r::nn::CheckFinite>);           // remat/layers/layer.hpp
static_assert(known<r::nn::Linear>);                // remat/layers/linear.hpp
static_assert(known<r::nn::LoRA>);                  // remat/layers/lora.hpp
static_assert(known<r::adapters::LoraConfig>);      // remat/adapters/lora.hpp
static_assert(known<r::adapters::PeftAdapter>);     // remat/adapters/peft.hpp
static_assert(known<r::nn::LayerNorm>);             // remat/layers/norm.hpp
static_assert(known<r::nn::RopeScaling>);           // remat/layers/rotary.hpp
static_assert(known<r::ops::AttentionDropout>);     // remat/ops/attention.hpp
static_assert(known<r::Autocast>);                  // remat/ops/precision.hpp
static_assert(known<r::ops::SoftmaxMask>);          // remat/ops/softmax.hpp
static_assert(known<r::planning::MemoryLimit>);     // remat/planning/memory_limit.hpp
static_assert(known<r::planning::Prediction>);      // remat/planning/plan.hpp
static_assert(known<r::planning::Profile>);         // remat/planning/profile.hpp
static_assert(known<r::text::ChatTemplate>);         // remat/text/chat_template.hpp
static_assert(known<r::text::HfTokenizer>);         // remat/text/hf_tokenizer.hpp
static_assert(known<r::text::ByteTokenizer>);       // remat/text/tokenizer.hpp
static_assert(known<r::text::WordPieceOptions>);    // remat/text/wordpiece.hpp
static_assert(known<r::train::StepGradient>);       // remat/train/micro_batches.hpp
static_assert(known<r::train::AdamW>);              // remat/train/optimisers.hpp
static_assert(known<r::train::RunState>);           // remat/train/run_state.hpp
static_assert(known<r::train::CosineSchedule>);     // remat/train/schedules.hpp
static_assert(known<r::train::Trainable>);          // remat/train/trainable.hpp
static_assert(known<r::train::Trainer>);            // remat/train/trainer.hpp
static_assert(known<r::tree::is_vector_t<int>>);    // remat/tree/node.hpp

// Headers whose public face is functions and templates: named in a function that is compiled, never called.
[[maybe_unused]] static void functions(r::Var x, r::Tensor t, r::IdTensor ids, r::Generator g, r::nn::Linear l,
                                       std::vector<r::nn::Linear> m, r::train::OptimiserState<r::train::AdamW, r::nn::Linear> s) {
    r::to_bfloat16(1.0f);                              // remat/core/bfloat16.hpp
    r::in_quotes("x");                                 // remat/core/in_quotes.hpp
    r::memory::live_bytes();                           // remat/core/memory.hpp
    r::parse_memory_size("1GiB");                      // remat/core/memory_size.hpp
    r::data::format_fingerprint(0);                    // remat/data/fingerprint.hpp
    r::nn::chain_from(g, l);                           // remat/layers/chain_from.hpp
    r::nn::padding_mask(ids);                          // remat/layers/attention.hpp
    r::nn::set_rng(l, std::shared_ptr<r::Generator>()); // remat/layers/generators.hpp
    r::init::glorot_uniform(r::Shape{2, 2}, g);        // remat/layers/init.hpp
    r::nn::set_mode(l, r::nn::Mode::test);             // remat/layers/modes.hpp
    r::ops::gelu_tanh(x);                              // remat/ops/activation.hpp
    r::ops::dropout(x, 0.1f, g);                       // remat/ops/dropout.hpp
    r::ops::add(x, x);                                 // remat/ops/elementwise.hpp
    r::ops::embedding(x, ids);                         // remat/ops/embedding.hpp
    r::ops::matmul(x, x);                              // remat/ops/linalg.hpp
    r::ops::cross_entropy(x, ids);                     // remat/ops/loss.hpp
    r::ops::exp(x);                                    // remat/ops/math.hpp
    r::ops::layer_norm(x, x, x, 1e-5f);                // remat/ops/norm.hpp
    r::ops::sum(x);                                    // remat/ops/reduce.hpp
    r::ops::rotary(x, t, t);                           // remat/ops/rotary.hpp
    r::ops::reshape(x, {2, 2});                        // remat/ops/shape.hpp
    r::ops::num_threads();                             // remat/ops/threads.hpp
    r::train::accumulate(l, l);                        // remat/train/accumulate.hpp
    r::train::withgradient([](r::nn::Linear&) { return r::Var(); }, l); // remat/train/gradient.hpp
    r::train::run_folder("out", 1);                    // remat/train/run_folders.hpp
    r::train::save_state(s, "optimiser.safetensors");  // remat/train/state_file.hpp
    r::train::weight_decay_mask(l);                    // remat/train/weight_decay.hpp
    r::tree::parameters(m);                            // remat/tree/parameters.hpp
    r::tree::summary(l);                               // remat/tree/show.hpp
    r::tree::postwalk([](auto y) { return y; }, std::move(l));  // remat/tree/walk.hpp
}

// remat/tree/model.hpp
REMAT_MODEL(Pair, (r::nn::Linear, a), (r::nn::Linear, b))
};
static_assert(known<Pair>);

int main() { return 0; }
