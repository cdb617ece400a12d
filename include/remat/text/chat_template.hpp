#pragma once
// Chat templates: the Jinja text of a tokenizer_config.json's `chat_template`, rendered as HF's
// tokenizer.apply_chat_template(messages, tokenize=False) renders it — Python's jinja2 with
// trim_blocks and lstrip_blocks, loop controls, raise_exception(), strftime_now() and HF's tojson.
// The language is the subset real chat templates use (docs/chat.md lists it); anything else is
// refused when the template is read, naming its line and column, never rendered as something else.
//
//   const ChatTemplate t(config["chat_template"]);
//   std::string text = t.render({{"messages", messages}, {"add_generation_prompt", true},
//                                {"bos_token", "<s>"}, {"eos_token", "</s>"}});
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "remat/core/error.hpp"

namespace remat::text {

namespace jinja {
struct Program;
}

// A template that cannot be read (message: "line L, column C: …"), or that fails or raises while
// rendering (raise_exception's message as the template gives it).
struct TemplateError : FormatError {
    using FormatError::FormatError;
};

struct RenderLimits {
    std::size_t output_bytes = std::size_t{64} << 20;  // the rendered text's size
    std::size_t steps = 50'000'000;                     // statements and expressions evaluated
    std::size_t depth = 200;                            // nested macro calls
};

class ChatTemplate {
public:
    explicit ChatTemplate(std::string_view source);
    // A tokenizer or model folder's template, as transformers finds it: chat_template.jinja, else
    // tokenizer_config.json's chat_template (a string, or a list of named ones: "default"), with the
    // special tokens of tokenizer_config.json (bos_token, eos_token, … as strings or {"content": …})
    // that apply() passes to it. TemplateError naming the file when there is none or it is malformed.
    static ChatTemplate from_folder(const std::filesystem::path& dir);

    // apply_chat_template(messages, tokenize=False, add_generation_prompt=…): `conversation` is a list
    // of messages ({"role": …, "content": …}), or an object with "messages" and any other variables
    // the template reads ("tools", "documents", "enable_thinking", …).
    std::string apply(const nlohmann::ordered_json& conversation, bool add_generation_prompt) const;

    // The text for these variables (messages, add_generation_prompt, bos_token, eos_token, tools, …).
    // `now` is what strftime_now() formats (the current local time when not given).
    std::string render(const nlohmann::ordered_json& variables, const RenderLimits& limits = {},
                       std::optional<std::tm> now = std::nullopt) const;

private:
    std::shared_ptr<const jinja::Program> program_;
    std::vector<std::pair<std::string, std::string>> special_tokens_;  // bos_token = "<s>", …
    std::vector<std::string> additional_special_tokens_;
};

}  // namespace remat::text
