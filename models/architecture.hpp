#pragma once
// The door every architecture comes through: one entry per HuggingFace model class, holding what a
// command needs to build, load, run, train and save it without naming it. An architecture is one
// folder under models/ plus one line in models/architectures.cpp (docs/models.md).
//
//   const models::Architecture& arch = models::find_for_config(folder / "config.json");
//   std::unique_ptr<models::Model> model = models::load(arch, folder, Policy::parse("blocks"));
//   Var logits = model->logits({.ids = {{"input_ids", ids}}});
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "remat/ad/var.hpp"
#include "remat/adapters/lora.hpp"
#include "remat/checkpoint.hpp"
#include "remat/generation/generate.hpp"
#include "remat/core/random.hpp"
#include "remat/hf/load.hpp"
#include "remat/planning/profile.hpp"
#include "remat/train/trainable.hpp"

namespace remat::models {

// What the model's head is trained for: `remat train` and `demo` take causal LMs, `run` any head.
enum class Objective {
    causal_lm,  // next-token cross-entropy, labels = the input ids (GPT2LMHeadModel)
    masked_lm,  // cross-entropy at labelled positions (BertForMaskedLM)
    none,       // a base model without a head (BertModel)
};

// How the folder's text is tokenised.
enum class TokenizerKind {
    bpe,             // tokenizer.json (HfTokenizer), else vocab.json + merges.txt (GPT-2); raw bytes without them
    wordpiece,       // BERT's vocab.txt (+ tokenizer_config.json); an error without it
    none,            // remat has no tokenizer for it yet
};


// The sizes `remat init` sets and commands print, in each architecture's own fields.
struct Sizes {
    std::size_t n_layer = 0, n_embd = 0, n_head = 0, vocab_size = 0, n_positions = 0;
};
struct SizeRequest {  // what the user gave; the rest keep the architecture's defaults
    std::optional<std::size_t> n_layer{}, n_embd{}, n_head{}, vocab_size{}, n_positions{};
    // Any other config field by HF's name, its value as JSON text ("500000.0", "true", "null",
    // "{…}") or a bare string ("silu"); applied after the sizes.
    std::vector<std::pair<std::string, std::string>> fields{};
};

// A configuration's facts, read from its config.json.
struct Summary {
    Sizes sizes;
    std::size_t type_vocab_size = 0;  // 0: the model takes no token_type_ids
    double dropout = 0;               // the residual dropout probability
};

// A model of any architecture, behind one interface; the struct itself stays a plain struct. As a
// train::Trainable (parameters, set_training, training_loss, trainer_adamw) train::Trainer trains it.
class Model : public train::Trainable {
public:
    virtual std::vector<hf::NamedTensor> named_tensors() = 0;  // parameters and buffers, by path
    virtual std::vector<std::pair<std::string, Param*>> named_parameters() = 0;
    // parameters(): in named_parameters() order, without the paths.
    virtual std::size_t count_parameters() = 0;
    // Reconfigures the blocks' checkpointing in place (remat::set_policy): a plan made after loading.
    virtual void set_policy(const Policy& policy) = 0;
    // Profiles the step `loss` computes for planning (planning::profile_checkpointing).
    virtual planning::Profile profile_checkpointing(const std::function<Var()>& loss,
                                                    const planning::ProfileOptions& options = {}) = 0;
    // The head's output: logits (B, T, V); a base model's hidden states (B, T, C). The batch holds the
    // forward's inputs by HF's names (a language model's "input_ids" (B, T), and "attention_mask",
    // "token_type_ids" where it takes them); what the architecture does not read is ignored.
    virtual Var logits(const data::Batch& in) = 0;
    // The architecture's own loss of logits against labels (ValueError for a base model).
    virtual Var loss(const Var& logits, const IdTensor& labels) = 0;
    // loss(logits(the batch's inputs), its "labels").
    Var training_loss(const data::Batch& batch) override;
    // generation::generate on the model (ValueError for a model that is not a causal LM).
    virtual generation::Result generate(const std::vector<std::vector<std::int64_t>>& prompts, const generation::Options& options) = 0;
    virtual hf::LoadReport load(const std::filesystem::path& dir) = 0;  // hf::load with the model's naming
    virtual void save(const std::string& config_json, const std::filesystem::path& dir) = 0;  // hf::save
    // torch.optim.AdamW over every parameter (trainer_adamw: as HF Trainer sets it up).
    virtual std::unique_ptr<train::Optimiser> adamw(const train::AdamW& rule) = 0;
    // adapters::set_lora and adapters::merge_lora on the model (remat/adapters/lora.hpp).
    virtual std::size_t set_lora(const adapters::LoraConfig& config, Generator& init,
                                 std::shared_ptr<Generator> dropout_rng = nullptr) = 0;
    virtual std::size_t merge_lora() = 0;
    virtual std::size_t hold_base_in_bf16() = 0;  // adapters::hold_base_in_bf16
};

// One table entry. Configs travel as config.json text: the entry parses them itself.
struct Architecture {
    std::string model_type{};               // HF's model_type: "gpt2"
    std::string hf_class{};                 // the class this entry builds: "GPT2LMHeadModel"
    std::vector<std::string> also_loads{};  // other classes of model_type whose checkpoints it loads
    std::string family{};                   // for people: "GPT-2"
    Objective objective = Objective::none;
    TokenizerKind tokenizer = TokenizerKind::none;
    Sizes default_sizes{};                     // a default config's sizes
    std::array<std::string, 5> size_fields{};  // the config fields behind Sizes, in its order: "n_layer", …
    std::vector<std::string> config_fields{};  // every field its config.json reads, by HF's name
    // The layers LoRA adapts when no targets are given: PEFT's default for the model_type
    // (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING); empty: targets must be given.
    std::vector<std::string> lora_targets{};
    bool weights_in_out = false;  // its linear layers store (in, out) weights: PEFT's fan_in_fan_out

    // Checks config.json text (ValueError "<source>: <field> …"); returns nothing.
    std::function<void(const std::string& text, const std::string& source)> check_config{};
    // The fields remat reads, as a JSON object text (for `remat info`).
    std::function<std::string(const std::string& config)> fields{};
    std::function<Summary(const std::string& config)> summary{};
    // The parameters a config describes, counted without building it (HF's num_parameters()); null
    // when the architecture does not say.
    std::function<std::size_t(const std::string& config)> parameter_count{};
    // A default config with the requested sizes and fields, validated (ValueError naming the field;
    // "<model_type> configs have no field …" for a field the architecture does not read).
    std::function<std::string(const SizeRequest& sizes)> config_with{};
    // A model initialised as HF initialises one (from `init`), checkpointed by `policy` (`none`
    // leaves every block plain), its dropouts drawing from dropout_rng (the shared default if null).
    std::function<std::unique_ptr<Model>(const std::string& config, Generator& init,
                                         std::shared_ptr<Generator> dropout_rng, const Policy& policy)>
        create{};
};

// The table: the built-in architectures, then those registered, in order.
const std::vector<const Architecture*>& architectures();
// Adds an architecture (one of a test's or a program's own); throws ValueError when its hf_class is
// already taken. The entry lives as long as the program.
void register_architecture(Architecture architecture);

// model_types without repeats, in table order: {"gpt2", "bert"}.
std::vector<std::string> model_types();
// The entry for a HF class name (hf_class or also_loads); null when none.
const Architecture* find_class(const std::string& hf_class);

// The entry a config.json text describes: by model_type — the first of its entries whose hf_class is
// listed in "architectures", else its first — or, without model_type, by the first listed class
// remat knows. ValueError "<source>: …" naming what is unsupported.
const Architecture& find_for_config(const std::string& text, const std::string& source);

// `create` from `dir`/config.json, then the checkpoint's weights (every tensor, or hf::LoadError).
std::unique_ptr<Model> load(const Architecture& architecture, const std::filesystem::path& dir, const Policy& policy,
                            std::shared_ptr<Generator> dropout_rng = nullptr, hf::LoadReport* report = nullptr);

// "gpt2 and bert", "a, b or c": a list for messages.
std::string join(const std::vector<std::string>& items, const std::string& last_separator);

}  // namespace remat::models
