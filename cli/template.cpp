#include "cli/template.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/errors.hpp"
#include "remat/core/files.hpp"
#include "src/core/strict_json.hpp"
#include "remat/text/chat_template.hpp"

namespace remat::cli {

namespace {

constexpr std::size_t max_conversation_bytes = std::size_t{256} << 20;

int print_template(const std::string& dir, const std::string& messages_file, bool generation_prompt) {
    const std::string text = conversation_text(dir, messages_file, generation_prompt);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
        throw Failure("cannot write to standard output");
    return exit_ok;
}

}  // namespace

std::string conversation_text(const std::filesystem::path& dir, const std::filesystem::path& messages, bool generation_prompt) {
    const text::ChatTemplate chat = text::ChatTemplate::from_folder(dir);
    nlohmann::ordered_json conversation;
    try {  // strict: bounded nesting, so no conversation is deep enough to overflow the template's recursion
        conversation = strict_json::parse<nlohmann::ordered_json>(read_file(messages, max_conversation_bytes, "a conversation"), messages.string());
    } catch (const strict_json::Error& e) {
        throw Failure(e.message() + " (expected a list of messages, [{\"role\": \"user\", \"content\": \"Hi\"}])");
    }
    try {
        return chat.apply(conversation, generation_prompt);
    } catch (const text::TemplateError& e) {
        throw Failure(messages.string() + ": the chat template stops: " + e.what());
    }
}

Command add_template_command(CLI::App& remat) {
    struct Flags {
        std::string dir, messages;
        bool generation_prompt = false;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = remat.add_subcommand("template", "Print a conversation as the model's chat template renders it (apply_chat_template)");
    command->add_option("DIR", flags->dir, "A model or tokenizer folder with a chat template (chat_template.jinja or "
                                           "tokenizer_config.json's chat_template)")
        ->required()
        ->type_name("");
    command->add_option("MESSAGES", flags->messages, "A JSON file: a list of messages, or an object with \"messages\" and "
                                                     "other variables the template reads (tools, enable_thinking, …)")
        ->required()
        ->type_name("");
    command->add_flag("--generation-prompt", flags->generation_prompt,
                      "End with the start of the assistant's turn (add_generation_prompt=True)");
    command->footer(
        "Prints exactly the text, without adding a newline.\n"
        "\n"
        "Example:\n"
        "  echo '[{\"role\": \"user\", \"content\": \"Hi!\"}]' > chat.json\n"
        "  remat template models/qwen2.5 chat.json --generation-prompt");
    return {command, [flags] { return print_template(flags->dir, flags->messages, flags->generation_prompt); }};
}

}  // namespace remat::cli
