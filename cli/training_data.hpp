#pragma once
// --data and --valid of `remat train`: a token file (`remat encode`), a folder of token files, or a
// text file or pipe, encoded on the fly with the model folder's tokenizer, cut into windows; or, with
// --format, a JSONL file of supervised examples (text, prompt-completion or chat), padded per
// micro-batch or packed into rows (--pack).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "remat/data/corpus.hpp"
#include "remat/data/dataset.hpp"
#include "remat/data/supervised.hpp"
#include "remat/text/chat_template.hpp"
#include "remat/text/tokenizer.hpp"

namespace remat::cli {

class TrainingTokens {
public:
    TrainingTokens(const std::filesystem::path& model_dir, const text::Tokenizer& tokenizer);

    // Failure naming the path: a token file of another tokenizer, a folder without token files, data
    // shorter than one window of `seq` tokens (with its token count).
    data::TokenCorpus open(const std::filesystem::path& path, std::size_t seq) const;

private:
    const text::Tokenizer& tokenizer_;
    std::uint64_t fingerprint_;
};

// How --format data is read and batched.
struct SupervisedSettings {
    data::SupervisedFormat format = data::SupervisedFormat::text;
    bool mask_prompt = true;
    bool pack = false;
};

// One of a run's data sets, as the trainer takes it and the run reports it.
struct RunDataset {
    std::unique_ptr<data::TokenCorpus> corpus;  // token data: what `examples` reads
    std::unique_ptr<data::Dataset> examples;
    std::uint64_t tokens = 0;  // the data's own (compared on resume)
    std::string unit;          // what one of `examples` is: "windows of 32", "examples", "rows of 512"
    std::string summary;       // the run's "data:" line after the name
};

// Token data cut into windows of `seq` tokens (BERT's framed: `framing`); Failure as open().
RunDataset windows_of(const TrainingTokens& tokens, const std::filesystem::path& path, std::size_t seq,
                      const std::optional<data::BertFraming>& framing, const std::string& tokenizer);

// Supervised examples from a JSONL file, cut to `seq` tokens; `chat` for the chat format. Failure with
// data::read_supervised's FILE:LINE message.
RunDataset supervised_examples(const std::filesystem::path& path, const text::Tokenizer& tokenizer,
                               const text::ChatTemplate* chat, const SupervisedSettings& settings, std::size_t seq);

}  // namespace remat::cli
