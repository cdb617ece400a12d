#include "cli/training.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/errors.hpp"
#include "remat/core/files.hpp"
#include "remat/text/wordpiece.hpp"

namespace remat::cli {

std::string read_text_file(const std::filesystem::path& path) {
    std::string s = read_file(path, std::size_t{1} << 30, "a text held in memory (use remat encode for more)");
    if (s.empty()) throw Failure(path.string() + ": the file is empty, there is nothing to train on");
    return s;
}

text::FolderTokenizer tokenizer_of(const ModelFolder& folder, std::size_t vocab_size) {
    switch (folder.architecture->tokenizer) {
        case models::TokenizerKind::bpe:
            return text::tokenizer_for_folder(folder.dir, static_cast<std::int64_t>(vocab_size));
        case models::TokenizerKind::wordpiece: {
            std::error_code ec;
            if (const auto vocab = folder.dir / "vocab.txt"; !std::filesystem::exists(vocab, ec))
                throw Failure(vocab.string() + ": missing; a " + folder.architecture->hf_class +
                              " folder needs its WordPiece vocabulary (vocab.txt, as HF's BertTokenizer saves it)");
            return text::wordpiece_for_folder(folder.dir, static_cast<std::int64_t>(vocab_size));
        }
        case models::TokenizerKind::none: break;
    }
    throw Failure(folder.config.string() + ": remat has no tokenizer for " + folder.architecture->hf_class + " yet");
}

text::FolderTokenizer tokenizer_of_folder(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Failure(dir.string() + ": not a folder (give a model folder or a tokenizer folder)");
    if (fs::exists(dir / "config.json", ec)) {
        const ModelFolder folder = inspect(dir);
        return tokenizer_of(folder, folder.architecture->summary(folder.config_text).sizes.vocab_size);
    }
    const bool bpe = (fs::exists(dir / "vocab.json", ec) && fs::exists(dir / "merges.txt", ec)) || fs::exists(dir / "tokenizer.json", ec);
    if (bpe) return text::tokenizer_for_folder(dir, std::int64_t{1} << 32);
    if (fs::exists(dir / "vocab.txt", ec)) return text::wordpiece_for_folder(dir, std::int64_t{1} << 32);
    throw Failure(dir.string() + ": neither a model folder (config.json) nor a tokenizer folder (tokenizer.json, vocab.json + "
                  "merges.txt, or BERT's vocab.txt)");
}

std::size_t window_length(std::optional<std::int64_t> seq, std::size_t n_positions) {
    const std::size_t t = seq ? static_cast<std::size_t>(*seq) : std::min<std::size_t>(128, n_positions);
    if (t < 2) throw Failure("--seq must be at least 2 (a window predicts each next token), got " + std::to_string(t));
    if (t > n_positions)
        throw Failure("--seq " + std::to_string(t) + " is longer than the model's n_positions " + std::to_string(n_positions));
    return t;
}

std::vector<std::int64_t> tokenize(const text::Tokenizer& tokenizer, std::string_view text, std::string_view source,
                                   std::size_t seq) {
    std::vector<std::int64_t> ids = tokenizer.encode(text);
    if (ids.size() < seq)
        throw Failure(std::string(source) + ": " + std::to_string(ids.size()) + " tokens are fewer than one window of " +
                      std::to_string(seq) + " (--seq); give a longer text or a smaller --seq");
    return ids;
}

WindowSampler::WindowSampler(const std::vector<std::int64_t>& ids, std::size_t seq, std::uint64_t seed)
    : ids_(ids), seq_(seq), rng_(seed) {}

IdTensor WindowSampler::next(std::size_t batch) {
    // Offsets from 64 random bits each: the modulo bias is below 2^-40 for any text that fits in memory.
    const std::uint64_t starts = ids_.size() - seq_ + 1;
    std::vector<std::uint32_t> bits(2 * batch);
    rng_.fill_bits(bits.data(), bits.size());
    IdTensor out = IdTensor::from_shape({batch, seq_});
    for (std::size_t b = 0; b < batch; ++b) {
        const std::uint64_t r = (std::uint64_t(bits[2 * b]) << 32) | bits[2 * b + 1];
        const std::int64_t* window = ids_.data() + r % starts;
        std::copy(window, window + seq_, out.data() + b * seq_);
    }
    return out;
}

std::string format_duration(double seconds) {
    const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
    char text[32];
    if (s >= 3600)
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
    return text;
}

}  // namespace remat::cli
