#include "remat/data/supervised.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "remat/core/error.hpp"

namespace remat::data {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr std::size_t max_line_bytes = std::size_t{64} << 20;

struct Line {
    const fs::path& file;
    std::size_t number;
    [[noreturn]] void fail(const std::string& why) const {
        throw FormatError(file.string() + ":" + std::to_string(number) + ": " + why);
    }
};

const std::string& text_field(const Line& line, const json& j, const char* name) {
    if (!j.contains(name)) line.fail(std::string("no \"") + name + "\" field");
    if (!j[name].is_string()) line.fail(std::string("\"") + name + "\" must be a string");
    return j[name].get_ref<const std::string&>();
}

bool starts_with(const std::vector<std::int64_t>& ids, const std::vector<std::int64_t>& prefix) {
    return prefix.size() <= ids.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

SupervisedExample completion_example(const Line& line, const json& j, const text::Tokenizer& tokenizer, bool mask_prompt) {
    const std::string& prompt = text_field(line, j, "prompt");
    const std::string& completion = text_field(line, j, "completion");
    SupervisedExample e;
    e.input_ids = tokenizer.encode_with_special_tokens(prompt + completion);
    e.labels = e.input_ids;
    if (mask_prompt) {
        // The prompt's tokens as tokenizer(prompt) gives them, less what it adds at the end (an EOS): the
        // longest common beginning, as TRL masks a prompt.
        const std::vector<std::int64_t> prompt_ids = tokenizer.encode_with_special_tokens(prompt);
        const auto mismatch = std::mismatch(prompt_ids.begin(), prompt_ids.end(), e.input_ids.begin(), e.input_ids.end());
        std::fill(e.labels.begin(), e.labels.begin() + (mismatch.second - e.input_ids.begin()), ignore_label);
    }
    return e;
}

SupervisedExample chat_example(const Line& line, const json& j, const text::Tokenizer& tokenizer, const text::ChatTemplate& chat,
                               bool mask_prompt) {
    if (!j.contains("messages")) line.fail("no \"messages\" field");
    const json& messages = j["messages"];
    if (!messages.is_array() || messages.empty()) line.fail("\"messages\" must be a non-empty list of messages");
    for (const json& m : messages)
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            line.fail("every message must be an object with a \"role\" string");
    json conversation = j;  // other fields (tools, …) are the template's variables too
    const auto render = [&](std::size_t turns, bool generation_prompt) {
        conversation["messages"] = json(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(turns));
        try {
            return chat.apply(conversation, generation_prompt);
        } catch (const text::TemplateError& e) {
            line.fail(std::string("the chat template stops: ") + e.what());
        }
    };
    const std::string whole = render(messages.size(), false);
    SupervisedExample e;
    e.input_ids = tokenizer.encode(whole);  // the template writes the special tokens
    if (!mask_prompt) {
        e.labels = e.input_ids;
        return e;
    }
    e.labels.assign(e.input_ids.size(), ignore_label);
    bool any = false;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        if (messages[i]["role"] != "assistant") continue;
        const std::string before = i == 0 ? std::string() : render(i, true), through = render(i + 1, false);
        const std::vector<std::int64_t> from = tokenizer.encode(before), to = tokenizer.encode(through);
        if (!whole.starts_with(before) || !whole.starts_with(through) || !starts_with(e.input_ids, from) || !starts_with(e.input_ids, to) ||
            to.size() < from.size())
            line.fail("the chat template renders the turns before assistant message " + std::to_string(i + 1) +
                      " differently from the whole conversation, so its tokens cannot be found (use --no-mask-prompt)");
        std::copy(e.input_ids.begin() + static_cast<std::ptrdiff_t>(from.size()), e.input_ids.begin() + static_cast<std::ptrdiff_t>(to.size()),
                  e.labels.begin() + static_cast<std::ptrdiff_t>(from.size()));
        any = true;
    }
    if (!any) line.fail("the conversation has no assistant message to learn from");
    return e;
}

}  // namespace

SupervisedFormat parse_supervised_format(const std::string& name) {
    if (name == "text") return SupervisedFormat::text;
    if (name == "completion") return SupervisedFormat::completion;
    if (name == "chat") return SupervisedFormat::chat;
    throw ValueError("unknown data format \"" + name + "\" (the formats are text, completion and chat)");
}

SupervisedExamples read_supervised(const fs::path& jsonl, const text::Tokenizer& tokenizer, const text::ChatTemplate* chat,
                                   const SupervisedOptions& options) {
    if (options.format == SupervisedFormat::chat && !chat) throw ValueError(jsonl.string() + ": the chat format needs the model's chat template");
    std::ifstream in(jsonl, std::ios::binary);
    if (!in) throw FormatError(jsonl.string() + ": cannot read");
    SupervisedExamples out;
    std::string text;
    for (std::size_t number = 1;; ++number) {
        // One line, bounded: a file without newlines does not take the memory.
        text.clear();
        char c;
        bool any = false;
        while (in.get(c)) {
            any = true;
            if (c == '\n') break;
            if (text.size() >= max_line_bytes) Line{jsonl, number}.fail("a line longer than 64 MiB");
            text += c;
        }
        if (!any) break;
        const Line line{jsonl, number};
        if (std::all_of(text.begin(), text.end(), [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; })) continue;
        json j;
        try {
            j = json::parse(text);
        } catch (const json::parse_error& e) {
            const std::string what = e.what();
            line.fail("not JSON (" + what.substr(what.find(']') + 2) + ")");
        }
        if (!j.is_object()) line.fail("expected a JSON object, one example per line");
        SupervisedExample e;
        switch (options.format) {
            case SupervisedFormat::text:
                e.input_ids = tokenizer.encode_with_special_tokens(text_field(line, j, "text"));
                e.labels = e.input_ids;
                break;
            case SupervisedFormat::completion: e = completion_example(line, j, tokenizer, options.mask_prompt); break;
            case SupervisedFormat::chat: e = chat_example(line, j, tokenizer, *chat, options.mask_prompt); break;
        }
        if (e.input_ids.empty()) line.fail("the example has no tokens");
        if (options.max_tokens && e.input_ids.size() > options.max_tokens) {
            e.input_ids.resize(options.max_tokens);
            e.labels.resize(options.max_tokens);
            ++out.cut;
        }
        if (std::all_of(e.labels.begin() + 1, e.labels.end(), [](std::int64_t l) { return l == ignore_label; })) {
            ++out.unlabelled;
            continue;
        }
        out.examples.push_back(std::move(e));
    }
    if (in.bad()) throw FormatError(jsonl.string() + ": cannot read");
    if (out.examples.empty() && out.unlabelled)
        throw FormatError(jsonl.string() + ": no example has a labelled token" +
                          (options.max_tokens ? " within its first " + std::to_string(options.max_tokens) + " tokens" : std::string()));
    if (out.examples.empty()) throw FormatError(jsonl.string() + ": no examples");
    return out;
}

SupervisedBatches::SupervisedBatches(SupervisedExamples examples, std::int64_t pad_id, std::string name)
    : examples_(std::move(examples)), pad_id_(pad_id), name_(std::move(name)) {
    if (examples_.examples.empty()) throw ValueError(name_ + ": no examples");
    std::size_t total = 0;
    for (const SupervisedExample& e : examples_.examples) {
        if (e.input_ids.empty() || e.labels.size() != e.input_ids.size())
            throw ValueError(name_ + ": an example without tokens, or with labels of another length");
        total += e.input_ids.size();
    }
    mean_tokens_ = (total + examples_.examples.size() - 1) / examples_.examples.size();
}

Batch SupervisedBatches::batch(std::span<const std::uint64_t> indices, const MaskingKey&) const {
    if (indices.empty()) throw ValueError(name_ + ": an empty batch");
    std::size_t T = 0;
    for (const std::uint64_t i : indices) {
        if (i >= examples_.examples.size())
            throw ValueError(name_ + ": example " + std::to_string(i) + " of " + std::to_string(examples_.examples.size()));
        T = std::max(T, examples_.examples[i].input_ids.size());
    }
    const std::size_t B = indices.size();
    IdTensor ids = IdTensor::from_shape({B, T}), labels = IdTensor::from_shape({B, T}), mask = IdTensor::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b) {
        const SupervisedExample& e = examples_.examples[indices[b]];
        for (std::size_t t = 0; t < T; ++t) {
            const bool token = t < e.input_ids.size();
            ids(b, t) = token ? e.input_ids[t] : pad_id_;
            labels(b, t) = token ? e.labels[t] : ignore_label;
            mask(b, t) = token ? 1 : 0;
        }
    }
    return {.ids = {{"input_ids", std::move(ids)}, {"labels", std::move(labels)}, {"attention_mask", std::move(mask)}}};
}

}  // namespace remat::data
