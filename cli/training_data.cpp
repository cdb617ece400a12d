#include "cli/training_data.hpp"

#include "remat/core/files.hpp"

#include "cli/errors.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/data/packing.hpp"
#include "remat/data/token_file.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

TrainingTokens::TrainingTokens(const fs::path& model_dir, const text::Tokenizer& tokenizer)
    : tokenizer_(tokenizer), fingerprint_(data::tokenizer_fingerprint(model_dir)) {}

data::TokenCorpus TrainingTokens::open(const fs::path& given, std::size_t seq) const {
    const fs::path path = given == "-" ? fs::path("/dev/stdin") : given;  // "-": text from standard input
    std::error_code ec;
    // A pipe is never looked into before it is read: its first bytes would be gone.
    if (!fs::exists(path, ec)) throw Failure(path.string() + ": " + why_missing(path));
    data::TokenCorpus corpus = fs::is_directory(path, ec) || (fs::is_regular_file(path, ec) && data::is_token_file(path))
                                   ? data::TokenCorpus::open(path, fingerprint_, tokenizer_.describe())
                                   : data::TokenCorpus::encode_text(path, tokenizer_);
    if (corpus.windows(seq) == 0)
        throw Failure(corpus.name() + ": " + std::to_string(corpus.tokens()) + " tokens are fewer than one window of " +
                      std::to_string(seq) + " (--seq); give more data or a smaller --seq");
    return corpus;
}

RunDataset windows_of(const TrainingTokens& tokens, const fs::path& path, std::size_t seq,
                      const std::optional<data::BertFraming>& framing, const std::string& tokenizer) {
    const std::size_t run = framing ? seq - 2 : seq;  // tokens a window takes from the data
    RunDataset d;
    d.corpus = std::make_unique<data::TokenCorpus>(tokens.open(path, run));
    d.examples = std::make_unique<data::LmWindows>(*d.corpus, seq, framing);
    d.tokens = d.corpus->tokens();
    d.unit = "windows of " + std::to_string(run);
    d.summary = std::to_string(d.tokens) + " tokens, " + std::to_string(d.examples->size()) + " " + d.unit + " (" + tokenizer + ")";
    return d;
}

namespace {
const char* answers_of(data::SupervisedFormat format) {
    switch (format) {
        case data::SupervisedFormat::text: return "every token";
        case data::SupervisedFormat::completion: return "the completions";
        case data::SupervisedFormat::chat: return "the assistant turns";
    }
    return "";
}
const char* format_name(data::SupervisedFormat format) {
    switch (format) {
        case data::SupervisedFormat::text: return "text";
        case data::SupervisedFormat::completion: return "prompt-completion";
        case data::SupervisedFormat::chat: return "chat";
    }
    return "";
}
}  // namespace

RunDataset supervised_examples(const fs::path& path, const text::Tokenizer& tokenizer, const text::ChatTemplate* chat,
                               const SupervisedSettings& settings, std::size_t seq) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw Failure(path.string() + ": no such file");
    data::SupervisedExamples read;
    try {
        read = data::read_supervised(path, tokenizer, chat,
                                     {.format = settings.format, .mask_prompt = settings.mask_prompt, .max_tokens = seq});
    } catch (const Error& e) {
        throw Failure(e.message());
    }
    const std::size_t count = read.examples.size(), cut = read.cut, unlabelled = read.unlabelled;
    std::size_t labelled = 0;
    RunDataset d;
    for (const data::SupervisedExample& e : read.examples) {
        d.tokens += e.input_ids.size();
        for (std::size_t j = 1; j < e.labels.size(); ++j) labelled += e.labels[j] != data::ignore_label;  // the first predicts nothing
    }
    // Padding never enters the loss nor another token's attention: any id does; HF's scripts use eos.
    const std::int64_t pad = tokenizer.document_separator().value_or(0);
    std::string packing;
    if (settings.pack) {
        auto rows = std::make_unique<data::PackedExamples>(std::move(read), seq, pad, path.string());
        d.unit = "rows of " + std::to_string(seq);
        packing = "; packed into " + std::to_string(rows->size()) + " " + d.unit + " (" +
                  std::to_string(rows->padding() * 100 / (rows->size() * seq)) + " % padding)";
        d.examples = std::move(rows);
    } else {
        d.examples = std::make_unique<data::SupervisedBatches>(std::move(read), pad, path.string());
        d.unit = "examples";
    }
    d.summary = std::to_string(count) + " " + format_name(settings.format) + " examples (" + std::to_string(cut) + " cut to " +
                std::to_string(seq) + " tokens" +
                (unlabelled ? ", " + std::to_string(unlabelled) + " left out: no answer within them" : std::string()) + "), " + std::to_string(d.tokens) + " tokens, " + std::to_string(labelled) +
                " labelled (" + (settings.mask_prompt ? answers_of(settings.format) : "every token") + ")" + packing + " (" +
                tokenizer.describe() + ")";
    return d;
}

}  // namespace remat::cli
