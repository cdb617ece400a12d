// libFuzzer target: the chat-template engine (remat/text/chat_template.hpp) on any text as a template,
// rendered for a fixed conversation with small limits. Every input must render or raise
// text::TemplateError, within the limits; a crash, a hang or any other exception is a finding.
// Seeds: corpus/chat_template/ (the published templates of tests/fixtures/chat_templates and snippets).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "remat/text/chat_template.hpp"

using namespace remat;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const nlohmann::ordered_json variables = nlohmann::ordered_json::parse(R"({
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi {{ x }} ü"},
                     {"role": "assistant", "content": "Hello!", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                     {"role": "user", "content": ""}],
        "tools": null, "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
    const text::RenderLimits limits{.output_bytes = 1 << 20, .steps = 200'000, .depth = 50};
    const std::tm now{};
    try {
        const std::string text = text::ChatTemplate(std::string_view(reinterpret_cast<const char*>(data), size)).render(variables, limits, now);
        if (text.size() > limits.output_bytes) __builtin_trap();
    } catch (const text::TemplateError&) {
    }
    return 0;
}
