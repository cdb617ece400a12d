#include "models/mistral/config.hpp"

#include "models/llama/config_fields.hpp"

namespace remat::mistral {

const config_json::Schema<Config>& Config::schema() {
    static const config_json::Schema<Config> s = [] {
        config_json::Schema<Config> schema("Mistral config", "mistral", "MistralForCausalLM");
        llama::declare_fields(schema).size("sliding_window", &Config::sliding_window, config_json::Rule::positive_or_null).null_when_zero();
        return schema;
    }();
    return s;
}

}  // namespace remat::mistral

template struct remat::models::ConfigFile<remat::mistral::Config>;
