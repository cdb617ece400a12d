#include "models/qwen2/config.hpp"

#include "models/llama/config_fields.hpp"
#include "remat/core/in_quotes.hpp"

namespace remat::qwen2 {

using namespace config_json;

llama::Settings Config::settings() const {
    llama::Settings s{*this, true, false, false, std::vector<std::size_t>(num_hidden_layers, 0)};
    const std::size_t window = use_sliding_window ? sliding_window : 0;  // HF: null unless use_sliding_window
    for (std::size_t i = 0; i < num_hidden_layers; ++i) {
        const bool slides = layer_types.empty() ? window && i >= max_window_layers : layer_types[i] == "sliding_attention";
        s.windows[i] = slides ? window : 0;
    }
    return s;
}

const Schema<Config>& Config::schema() {
    static const Schema<Config> s = [] {
        Schema<Config> schema("Qwen2 config", "qwen2", "Qwen2ForCausalLM");
        llama::declare_fields(schema)
            .flag("use_sliding_window", &Config::use_sliding_window)
            .size("sliding_window", &Config::sliding_window).null_when_zero()
            .size("max_window_layers", &Config::max_window_layers)
            .custom("layer_types",
                    [](Config& c, const json& v, const std::string& key, const std::string& source) {
                        if (!v.is_array()) throw ValueError(source + ": " + key + " must be an array, got " + shown(v));
                        c.layer_types.clear();
                        for (const json& t : v) {
                            if (t != "full_attention" && t != "sliding_attention")
                                throw ValueError(source + ": unsupported " + key + " entry " + shown(t) +
                                                 " (\"full_attention\" or \"sliding_attention\")");
                            c.layer_types.push_back(t.get<std::string>());
                        }
                    },
                    [](const Config& c) { return c.layer_types.empty() ? json(nullptr) : json(c.layer_types); })
            .check([](const Config& c, const std::string& what) {
                if (!c.layer_types.empty() && c.layer_types.size() != c.num_hidden_layers)
                    throw ValueError(what + ": layer_types has " + std::to_string(c.layer_types.size()) +
                                     " entries for num_hidden_layers = " + std::to_string(c.num_hidden_layers));
                if (c.use_sliding_window && c.sliding_window == 0)
                    throw ValueError(what + ": use_sliding_window needs a sliding_window");
            });
        return schema;
    }();
    return s;
}

}  // namespace remat::qwen2

template struct remat::models::ConfigFile<remat::qwen2::Config>;
