#pragma once
// --data and --valid of `remat train`: a token file (`remat encode`), a folder of token files, or a
// text file or pipe, encoded on the fly with the model folder's tokenizer.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "remat/data/corpus.hpp"
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

}  // namespace remat::cli
