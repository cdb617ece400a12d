#include "remat/text/chat_template.hpp"

#include <nlohmann/json.hpp>

#include "remat/core/files.hpp"
#include "template/parser.hpp"
#include "template/render.hpp"

namespace remat::text {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {
constexpr std::size_t max_config_bytes = std::size_t{64} << 20;  // tokenizer_config.json lists every added token
constexpr const char* special_token_names[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};

// A special token as tokenizer_config.json writes it: a string, or an AddedToken {"content": …}.
std::optional<std::string> token_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return std::nullopt;
}
}  // namespace

ChatTemplate::ChatTemplate(std::string_view source)
    : program_(std::make_shared<const jinja::Program>(jinja::parse(source))) {}

ChatTemplate ChatTemplate::from_folder(const fs::path& dir) {
    const fs::path config_path = dir / "tokenizer_config.json", jinja_path = dir / "chat_template.jinja";
    json config = json::object();
    if (fs::exists(config_path)) {
        config = json::parse(read_file(config_path, max_config_bytes, "a tokenizer config"), nullptr, false);
        if (config.is_discarded() || !config.is_object()) throw TemplateError(config_path.string() + ": not a JSON object");
    }
    std::string source;
    fs::path from = jinja_path;
    if (fs::exists(jinja_path)) {
        source = read_file(jinja_path, max_config_bytes, "a chat template");
    } else {
        from = config_path;
        const json* t = config.contains("chat_template") ? &config["chat_template"] : nullptr;
        if (!t || t->is_null())
            throw TemplateError(dir.string() + ": no chat template (neither chat_template.jinja nor a chat_template in tokenizer_config.json)");
        if (t->is_string()) {
            source = t->get<std::string>();
        } else if (t->is_array()) {  // [{"name": "default", "template": …}, {"name": "tool_use", …}]
            for (const json& named : *t)
                if (named.is_object() && named.value("name", json()) == "default" && named.contains("template") && named["template"].is_string())
                    source = named["template"].get<std::string>();
            if (source.empty()) throw TemplateError(config_path.string() + ": chat_template lists no template named \"default\"");
        } else {
            throw TemplateError(config_path.string() + ": chat_template must be a string or a list of named templates");
        }
    }
    try {
        ChatTemplate t(source);
        for (const char* name : special_token_names)
            if (config.contains(name))
                if (auto text = token_text(config[name])) t.special_tokens_.emplace_back(name, *text);
        if (config.contains("additional_special_tokens") && config["additional_special_tokens"].is_array())
            for (const json& token : config["additional_special_tokens"])
                if (auto text = token_text(token)) t.additional_special_tokens_.push_back(*text);
        return t;
    } catch (const TemplateError& e) {
        throw TemplateError(from.string() + ": chat template " + e.what());
    }
}

std::string ChatTemplate::apply(const json& conversation, bool add_generation_prompt) const {
    json variables = json::object();
    for (const auto& [name, text] : special_tokens_) variables[name] = text;
    if (!additional_special_tokens_.empty()) variables["additional_special_tokens"] = additional_special_tokens_;
    variables["tools"] = nullptr;
    variables["documents"] = nullptr;
    if (conversation.is_array()) {
        variables["messages"] = conversation;
    } else if (conversation.is_object() && conversation.contains("messages")) {
        for (const auto& [key, value] : conversation.items()) variables[key] = value;
    } else {
        throw TemplateError("a conversation is a list of messages or an object with \"messages\"");
    }
    if (!variables["messages"].is_array()) throw TemplateError("\"messages\" must be a list of messages");
    variables["add_generation_prompt"] = add_generation_prompt;
    return render(variables);
}

std::string ChatTemplate::render(const json& variables, const RenderLimits& limits, std::optional<std::tm> now) const {
    if (!variables.is_object()) throw TemplateError("chat template: the variables must be a JSON object");
    const jinja::Value values = jinja::Value::from_json(variables);
    std::tm when{};
    if (now) {
        when = *now;
    } else {
        const std::time_t t = std::time(nullptr);
        localtime_r(&t, &when);
    }
    return jinja::render(*program_, *values.dict, limits, when);
}

}  // namespace remat::text
