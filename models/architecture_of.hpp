#pragma once
// An Architecture entry made from an architecture's facts: a struct its folder declares beside its
// model structs (docs/models.md lists what it holds; models/gpt2/architecture.hpp is the example).
// Included by each architecture's own .cpp; the commands see only models/architecture.hpp.
#include <utility>

#include "models/architecture.hpp"
#include "remat/layers/modes.hpp"
#include "remat/train/state_file.hpp"
#include "remat/train/weight_decay.hpp"
#include "remat/tree/parameters.hpp"

namespace remat::models {

namespace detail {

template <class M>
class OptimiserOf final : public train::Optimiser {
public:
    OptimiserOf(M& model, const train::AdamW& rule, std::vector<bool> decays = {}, std::vector<bool> owned = {})
        : model_(model), state_(train::setup(rule, model, std::move(owned))) {
        state_.decays = std::move(decays);
    }
    void update(std::span<const Tensor* const> grads) override { train::update(state_, model_, grads); }
    void set_learning_rate(float lr) override { state_.rule.lr = lr; }
    std::int64_t step() const override { return state_.step; }
    void save_state(const std::filesystem::path& path) const override { train::save_state(state_, path); }
    void load_state(std::span<const std::filesystem::path> paths) override { train::load_state(state_, paths); }
    std::size_t state_bytes() const override {
        std::size_t bytes = 0;
        for (const auto& moment : state_.moments)
            tree::foreach_parameter(moment, [&](const std::string&, const Param& p) { bytes += p.size() * sizeof(float); });
        return bytes;
    }

private:
    M& model_;
    train::OptimiserState<train::AdamW, M> state_;
};

template <class Facts, class M>
class ModelOf final : public Model {
public:
    explicit ModelOf(M model) : model_(std::move(model)) {}

    std::vector<hf::NamedTensor> named_tensors() override { return hf::named_tensors(model_); }
    std::vector<std::pair<std::string, Param*>> named_parameters() override { return tree::named_parameters(model_); }
    std::vector<Param*> parameters() override { return tree::parameters(model_); }
    std::size_t count_parameters() override { return tree::count_parameters(model_); }
    void set_training(bool training) override { training ? nn::trainmode(model_) : nn::testmode(model_); }
    void set_policy(const Policy& policy) override { remat::set_policy(model_, policy); }
    planning::Profile profile_checkpointing(const std::function<Var()>& loss,
                                            const planning::ProfileOptions& options) override {
        return planning::profile_checkpointing(model_, loss, options);
    }
    Var logits(const data::Batch& in) override { return Facts::logits(model_, in); }
    Var loss(const Var& logits, const IdTensor& labels) override {
        if constexpr (requires { model_.loss(logits, labels); })
            return model_.loss(logits, labels);
        else
            throw ValueError(std::string(Facts::hf_class) + " has no head and no loss");
    }
    generation::Result generate(const std::vector<std::vector<std::int64_t>>& prompts, const generation::Options& options) override {
        if constexpr (requires(IdTensor ids, nn::KVCache cache) { model_.next_logits(ids, cache); })
            return generation::generate(model_, prompts, options);
        else
            throw ValueError(std::string(Facts::hf_class) + " is not a causal language model: it cannot generate text");
    }
    hf::LoadReport load(const std::filesystem::path& dir) override { return hf::load(model_, dir); }
    void save(const std::string& config_json, const std::filesystem::path& dir) override {
        hf::save(model_, config_json, dir);
    }
    std::unique_ptr<train::Optimiser> adamw(const train::AdamW& rule) override {
        return std::make_unique<OptimiserOf<M>>(model_, rule);
    }
    std::unique_ptr<train::Optimiser> trainer_adamw(const train::AdamW& rule, std::vector<bool> owned) override {
        return std::make_unique<OptimiserOf<M>>(model_, rule, train::weight_decay_mask(model_), std::move(owned));
    }
    std::size_t set_lora(const adapters::LoraConfig& config, Generator& init,
                         std::shared_ptr<Generator> dropout_rng) override {
        return adapters::set_lora(model_, config, init, std::move(dropout_rng));
    }
    std::size_t merge_lora() override { return adapters::merge_lora(model_); }
    std::size_t hold_base_in_bf16() override { return adapters::hold_base_in_bf16(model_); }

private:
    M model_;
};

template <class Config>
Config parse(const std::string& text) {
    return Config::from_json(text, "config.json");
}

// config.json text with the given fields set (values as JSON text or bare strings), read back by
// `read` (which validates it). ValueError for a field not in `names`.
std::string with_fields(const std::string& config, const std::vector<std::string>& names, const std::string& model_type,
                        const std::vector<std::pair<std::string, std::string>>& fields,
                        const std::function<std::string(const std::string&)>& read);

}  // namespace detail

// The five members of a Config behind Sizes (n_layer, n_embd, n_head, vocab_size, n_positions).
template <class C>
using SizeMembers = std::array<std::size_t C::*, 5>;

template <class C>
Sizes sizes_of(const C& c, const SizeMembers<C>& m) {
    return {c.*m[0], c.*m[1], c.*m[2], c.*m[3], c.*m[4]};
}

template <class Facts>
Architecture architecture_of() {
    using Config = typename Facts::Config;
    Architecture a;
    a.model_type = Facts::model_type;
    a.hf_class = Facts::hf_class;
    a.also_loads = Facts::also_loads();
    a.family = Facts::family;
    a.objective = Facts::objective;
    a.tokenizer = Facts::tokenizer;
    a.default_sizes = sizes_of(Config{}, Facts::size_members);
    for (std::size_t i = 0; i < a.size_fields.size(); ++i) a.size_fields[i] = Facts::size_fields[i];
    a.config_fields = Config::field_names();
    if constexpr (requires { Facts::lora_targets(); }) a.lora_targets = Facts::lora_targets();
    if constexpr (requires { Facts::weights_in_out; }) a.weights_in_out = Facts::weights_in_out;
    a.check_config = [](const std::string& text, const std::string& source) { (void)Config::from_json(text, source); };
    a.fields = [](const std::string& text) { return detail::parse<Config>(text).fields_json(); };
    a.summary = [](const std::string& text) { return Facts::summary(detail::parse<Config>(text)); };
    if constexpr (requires(const Config& c) { Facts::parameter_count(c); })
        a.parameter_count = [](const std::string& text) { return Facts::parameter_count(detail::parse<Config>(text)); };
    a.config_with = [](const SizeRequest& request) {
        Config c;
        const std::optional<std::size_t> requested[] = {request.n_layer, request.n_embd, request.n_head,
                                                        request.vocab_size, request.n_positions};
        for (std::size_t i = 0; i < 5; ++i)
            if (requested[i]) c.*Facts::size_members[i] = *requested[i];
        if constexpr (requires { Facts::resized(c, request); }) Facts::resized(c, request);
        if (request.fields.empty()) {
            c.validate();
            return c.to_json();
        }
        return detail::with_fields(c.to_json(), Config::field_names(), Facts::model_type, request.fields,
                                   [](const std::string& text) { return Config::from_json(text, "remat init").to_json(); });
    };
    a.create = [](const std::string& text, Generator& init, std::shared_ptr<Generator> dropout_rng,
                  const Policy& policy) -> std::unique_ptr<Model> {
        // Architectures that build one model type share its instantiation (the Llama family).
        if constexpr (requires { Facts::make_model(detail::parse<Config>(text), init, dropout_rng, policy); }) {
            return Facts::make_model(detail::parse<Config>(text), init, std::move(dropout_rng), policy);
        } else {
            auto model = set_checkpointing(Facts::create(detail::parse<Config>(text), init, std::move(dropout_rng)), policy);
            return std::make_unique<detail::ModelOf<Facts, decltype(model)>>(std::move(model));
        }
    };
    return a;
}

}  // namespace remat::models
