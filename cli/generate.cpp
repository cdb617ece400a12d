#include "cli/generate.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/errors.hpp"
#include "cli/flags.hpp"
#include "cli/lora.hpp"
#include "cli/model_folder.hpp"
#include "cli/numbers.hpp"
#include "cli/run_size.hpp"
#include "cli/template.hpp"
#include "cli/training.hpp"
#include "remat/core/files.hpp"
#include "remat/core/memory_size.hpp"
#include "remat/generation/generation_config.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

// The bytes of `text` that end on a whole character: a multi-byte character cut at the end (raw
// bytes), or a U+FFFD that may stand for one (a decoder's replacement), waits for the next token.
std::size_t whole_characters(std::string_view text) {
    if (text.ends_with("\xEF\xBF\xBD")) return text.size() - 3;
    for (std::size_t back = 1; back <= std::min<std::size_t>(3, text.size()); ++back) {
        const auto c = static_cast<unsigned char>(text[text.size() - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
        const std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return length > back ? text.size() - back : text.size();
    }
    return text.size();
}

void write_out(std::string_view bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0)
        throw Failure("cannot write to standard output");
}

generation::Options settings(const GenerateOptions& o, const fs::path& dir, std::size_t context) {
    generation::FolderSettings folder = generation::read_folder_settings(dir);
    generation::Options g = folder.options;
    if (!folder.max_new_tokens_given) g.max_new_tokens = 128;
    if (o.max_new_tokens) g.max_new_tokens = *o.max_new_tokens;
    if (o.temperature) {
        g.sampling.do_sample = *o.temperature > 0;
        if (*o.temperature > 0) g.sampling.temperature = *o.temperature;
    }
    if (o.top_k) g.sampling.top_k = *o.top_k;
    if (o.top_p) {
        if (!(*o.top_p > 0 && *o.top_p <= 1)) throw Failure("--top-p must be in (0, 1], got " + shortest_text(static_cast<float>(*o.top_p)));
        g.sampling.top_p = *o.top_p;
    }
    if (o.repetition_penalty) g.sampling.repetition_penalty = *o.repetition_penalty;
    if (o.seed) g.seed = *o.seed;
    g.context_length = context;
    generation::check(g.sampling);
    return g;
}

}  // namespace

int generate(const GenerateOptions& o) {
    const ModelFolder folder = causal_lm_folder(o.dir, "generate");
    const models::Summary summary = folder.architecture->summary(folder.config_text);
    const text::FolderTokenizer tokenizer = tokenizer_of(folder, summary.sizes.vocab_size);
    for (const std::string& w : tokenizer.warnings) print_warning(w);
    std::vector<std::int64_t> prompt_ids;
    const std::string source = o.chat ? "--chat " + o.chat->string() : o.prompt ? "--prompt" : o.prompt_file->string();
    if (o.chat) {
        prompt_ids = tokenizer.tokenizer->encode(conversation_text(o.dir, *o.chat, true));  // the template writes the special tokens
    } else {
        const std::string prompt = o.prompt ? *o.prompt : read_file(*o.prompt_file, std::size_t{16} << 20, "a prompt");
        if (prompt.empty()) throw Failure(o.prompt ? "--prompt is empty" : o.prompt_file->string() + ": the prompt is empty");
        try {
            prompt_ids = tokenizer.tokenizer->encode_with_special_tokens(prompt);
        } catch (const std::bad_alloc&) {
            throw Failure(out_of_memory_tokenizing(source, prompt.size()));
        }
    }
    if (prompt_ids.empty()) throw Failure("the prompt has no tokens");
    const std::size_t context = summary.sizes.n_positions;
    if (prompt_ids.size() > context)
        throw Failure(source + ": the prompt is " + std::to_string(prompt_ids.size()) + " tokens, longer than the model's context of " +
                      std::to_string(context) + " positions");
    generation::Options g = settings(o, folder.dir, context);
    check_run_fits("--max-new-tokens " + std::to_string(g.max_new_tokens), checkpoint_weight_bytes(folder.dir), 1,
                   std::min(context, prompt_ids.size() + g.max_new_tokens), summary.sizes.vocab_size, {});

    auto model = load_model(folder, Policy::none());
    if (o.adapter) attach_adapter(*model, *o.adapter);  // unmerged, as PEFT's PeftModel.generate runs it
    model->set_training(false);
    const text::Tokenizer& t = *tokenizer.tokenizer;
    // The text is of the ids a token has: a model's embedding may be larger than its tokenizer (Qwen2's
    // is padded) or the vocabulary sparse, and HF's decode drops ids no token has.
    std::vector<std::int64_t> generated, decodable;
    std::string printed, reason = "length";
    g.on_token = [&](std::size_t, std::int64_t token) {
        generated.push_back(token);
        if (t.has_id(token)) decodable.push_back(token);
        const std::string text = t.decode_as_hf(decodable, true);
        for (const std::string& stop : o.stop)
            if (text.find(stop) != std::string::npos) reason = "stop";
        const std::string_view whole = std::string_view(text).substr(0, whole_characters(text));
        if (!o.json && whole.size() > printed.size() && whole.starts_with(printed)) {
            write_out(whole.substr(printed.size()));
            printed = whole;
        }
        return reason != "stop";
    };
    const generation::Result r = model->generate({prompt_ids}, g);
    const std::string text = t.decode_as_hf(decodable, true);
    if (r.stopped[0] && reason != "stop") reason = "eos";
    if (r.context_full) {
        reason = "context";
        print_warning("generation stopped at the model's context of " + std::to_string(context) + " positions");
    }
    const double decode_rate = r.decode_seconds > 0 ? static_cast<double>(r.decode_steps) / r.decode_seconds : 0.0;
    if (o.json) {
        const nlohmann::json out = {{"prompt_ids", prompt_ids},
                                    {"generated_ids", generated},
                                    {"text", text},
                                    {"stopped_by", reason},
                                    {"time_to_first_token_s", r.prefill_seconds},
                                    {"decode_seconds", r.decode_seconds},
                                    {"decode_tokens_per_s", decode_rate},
                                    {"kv_cache_bytes", r.cache_bytes}};
        write_out(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        return exit_ok;
    }
    if (text.size() > printed.size() && text.starts_with(printed)) write_out(std::string_view(text).substr(printed.size()));
    write_out("\n");
    char line[320];
    std::snprintf(line, sizeof line, "prompt %zu tokens, generated %zu (%s); first token after %.3f s, then %.1f tokens/s; KV cache %s\n",
                  prompt_ids.size(), generated.size(), reason.c_str(), r.prefill_seconds, decode_rate,
                  readable_memory_size(r.cache_bytes).c_str());
    std::fputs(line, stderr);
    return exit_ok;
}

Command add_generate_command(CLI::App& remat) {
    struct Flags {
        std::string dir, prompt, prompt_file, chat, adapter;
        Text max_new_tokens, temperature, top_k, top_p, repetition_penalty, seed;
        std::vector<std::string> stop;
        bool json = false;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* command = remat.add_subcommand("generate", "Continue a prompt with a causal LM, streaming the text (greedy unless told to sample)");
    command->add_option("DIR", f->dir, "A model folder of a causal LM, with its tokenizer")->required()->type_name("");
    CLI::Option* prompt = command->add_option("--prompt", f->prompt, "The text to continue")->type_name("TEXT");
    CLI::Option* file = command->add_option("--prompt-file", f->prompt_file, "Read the prompt from a file")->type_name("F");
    CLI::Option* chat = command->add_option("--chat", f->chat, "A conversation (JSON: a list of messages) to answer, through the model's "
                                                               "chat template with the generation prompt")->type_name("MESSAGES.json");
    prompt->excludes(file);
    chat->excludes(prompt);
    chat->excludes(file);
    add(command, "--max-new-tokens", f->max_new_tokens, "Tokens to generate at most (generation_config.json's, else 128)", "N");
    add(command, "--temperature", f->temperature, "Sample at this temperature; 0: greedy (default: generation_config.json's do_sample)", "T");
    add(command, "--top-k", f->top_k, "Sample from the K most likely tokens (0: all; default 50)", "K");
    add(command, "--top-p", f->top_p, "Sample from the fewest tokens whose probability reaches P, in (0, 1]", "P");
    add(command, "--repetition-penalty", f->repetition_penalty, "Divide the logits of tokens already seen by R (HF's rule)", "R");
    command->add_option("--stop", f->stop, "End when the text contains TEXT (may be repeated); EOS ends it too")->type_name("TEXT");
    add(command, "--seed", f->seed, "The sampling generator's seed (default 0): the same seed, the same text", "S");
    command->add_option("--adapter", f->adapter, "Generate with this LoRA adapter on the model (HF PEFT's folder)")->type_name("ADIR");
    command->add_flag("--json", f->json, "Print one JSON object (ids, text, timings) instead of streaming");
    command->footer(
        "Settings come from the folder's generation_config.json when it has one, as HF's generate takes them; flags\n"
        "override them. The text streams to stdout as tokens arrive; counts and speed go to stderr.\n"
        "\n"
        "Examples:\n"
        "  remat generate models/gpt2 --prompt 'The meaning of life is' --max-new-tokens 40\n"
        "  remat generate models/smollm --prompt-file question.txt --temperature 0.7 --top-p 0.9 --seed 1\n"
        "  remat generate models/gpt2 --prompt 'Hello' --json\n"
        "  remat generate models/qwen2.5-instruct --chat chat.json --max-new-tokens 200");
    return {command, [f, prompt] {
                GenerateOptions o;
                o.dir = f->dir;
                if (prompt->count() > 0) o.prompt = f->prompt;
                if (!f->prompt_file.empty()) o.prompt_file = f->prompt_file;
                if (!f->chat.empty()) o.chat = f->chat;
                if (!o.prompt && !o.prompt_file && !o.chat)
                    throw Failure("give the text to continue: --prompt TEXT, --prompt-file F or --chat MESSAGES.json");
                if (f->max_new_tokens.given()) o.max_new_tokens = static_cast<std::size_t>(parse_count("--max-new-tokens", f->max_new_tokens.value, 1));
                if (f->temperature.given()) o.temperature = parse_number("--temperature", f->temperature.value, 0, false);
                if (f->top_k.given()) o.top_k = static_cast<std::size_t>(parse_count("--top-k", f->top_k.value, 0));
                if (f->top_p.given()) o.top_p = parse_number("--top-p", f->top_p.value, 0, true);
                if (f->repetition_penalty.given()) o.repetition_penalty = parse_number("--repetition-penalty", f->repetition_penalty.value, 0, true);
                if (f->seed.given()) o.seed = static_cast<std::uint64_t>(parse_count("--seed", f->seed.value, 0));
                for (const std::string& stop : f->stop)  // "" is in every text: it would end generation after one token
                    if (stop.empty()) throw Failure("--stop: an empty text would end every generation at once");
                o.stop = f->stop;
                o.json = f->json;
                if (!f->adapter.empty()) o.adapter = f->adapter;
                return generate(o);
            }};
}

}  // namespace remat::cli
