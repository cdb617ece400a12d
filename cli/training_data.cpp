#include "cli/training_data.hpp"

#include "cli/errors.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/data/token_file.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

TrainingTokens::TrainingTokens(const fs::path& model_dir, const text::Tokenizer& tokenizer)
    : tokenizer_(tokenizer), fingerprint_(data::tokenizer_fingerprint(model_dir)) {}

data::TokenCorpus TrainingTokens::open(const fs::path& given, std::size_t seq) const {
    const fs::path path = given == "-" ? fs::path("/dev/stdin") : given;  // "-": text from standard input
    std::error_code ec;
    // A pipe is never looked into before it is read: its first bytes would be gone.
    if (!fs::exists(path, ec)) throw Failure(path.string() + ": no such file or folder");
    data::TokenCorpus corpus = fs::is_directory(path, ec) || (fs::is_regular_file(path, ec) && data::is_token_file(path))
                                   ? data::TokenCorpus::open(path, fingerprint_, tokenizer_.describe())
                                   : data::TokenCorpus::encode_text(path, tokenizer_);
    if (corpus.windows(seq) == 0)
        throw Failure(corpus.name() + ": " + std::to_string(corpus.tokens()) + " tokens are fewer than one window of " +
                      std::to_string(seq) + " (--seq); give more data or a smaller --seq");
    return corpus;
}

}  // namespace remat::cli
