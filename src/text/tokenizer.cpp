#include "remat/text/tokenizer.hpp"

#include <algorithm>

#include "remat/core/error.hpp"
#include "remat/text/hf_tokenizer.hpp"
#include "src/text/added_tokens.hpp"
#include "src/text/bpe.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/pretokenize.hpp"
#include "src/text/safe_cut.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text {

namespace fs = std::filesystem;

// ------------------------------------------------------------------------------------------ raw bytes

std::vector<std::int64_t> ByteTokenizer::encode(std::string_view text) const {
    std::vector<std::int64_t> ids(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) ids[i] = static_cast<unsigned char>(text[i]);
    return ids;
}

std::string ByteTokenizer::decode(std::span<const std::int64_t> ids) const {
    std::string text(ids.size(), '\0');
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] > 255)
            throw ValueError("decode: token id " + std::to_string(ids[i]) + " is not a byte (raw-byte ids are 0 to 255)");
        text[i] = static_cast<char>(static_cast<unsigned char>(ids[i]));
    }
    return text;
}

std::string ByteTokenizer::describe() const { return "raw bytes (256 ids)"; }

// ---------------------------------------------------------------------------------------------- GPT-2


Gpt2Tokenizer Gpt2Tokenizer::from_files(const fs::path& vocab_json, const fs::path& merges_txt) {
    return Gpt2Tokenizer(detail::read_vocab_and_merges(vocab_json, merges_txt));
}

Gpt2Tokenizer Gpt2Tokenizer::from_tokenizer_json(const fs::path& tokenizer_json) {
    return Gpt2Tokenizer(detail::read_tokenizer_json(tokenizer_json));
}

std::vector<std::int64_t> Gpt2Tokenizer::encode(std::string_view text) const {
    std::string repaired;
    text = detail::as_utf8(text, repaired);
    std::vector<std::int64_t> ids;
    ids.reserve(text.size() / 4 + 16);
    detail::BpeWorkspace work;
    auto encode_plain = [&](std::string_view segment) {
        detail::Pretokens pieces(segment);
        for (std::string_view piece = pieces.next(); !piece.empty(); piece = pieces.next()) detail::bpe_encode(*tables_, piece, work, ids);
    };
    detail::split_added(text, tables_->added, encode_plain, [&](std::int32_t id) { ids.push_back(id); });
    return ids;
}

bool Gpt2Tokenizer::has_id(std::int64_t id) const {
    return id >= 0 && id < tables_->vocab_size && tables_->bytes_of_id.contains(static_cast<std::int32_t>(id));
}

std::string Gpt2Tokenizer::decode(std::span<const std::int64_t> ids) const {
    std::string text;
    for (const std::int64_t id : ids) {
        if (id < 0 || id >= tables_->vocab_size)
            throw ValueError("decode: token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(tables_->vocab_size) + ")");
        auto it = tables_->bytes_of_id.find(static_cast<std::int32_t>(id));
        if (it == tables_->bytes_of_id.end()) throw ValueError("decode: no token has id " + std::to_string(id));
        text += it->second;
    }
    return text;
}

std::string Gpt2Tokenizer::decode_as_hf(std::span<const std::int64_t> ids, bool skip_special_tokens) const {
    if (!skip_special_tokens) return decode(ids);
    std::vector<std::int64_t> kept;
    for (const std::int64_t id : ids)
        if (std::none_of(tables_->added.begin(), tables_->added.end(), [&](const detail::AddedToken& a) { return a.id == id; })) kept.push_back(id);
    return decode(kept);
}

std::int64_t Gpt2Tokenizer::vocab_size() const { return tables_->vocab_size; }

std::optional<std::int64_t> Gpt2Tokenizer::document_separator() const {
    for (const detail::AddedToken& t : tables_->added)
        if (t.content == "<|endoftext|>") return t.id;
    return std::nullopt;
}

std::size_t Gpt2Tokenizer::last_safe_cut(std::string_view text) const { return detail::gpt2_last_safe_cut(text, tables_->added); }

std::string Gpt2Tokenizer::describe() const {
    return "GPT-2 byte-level BPE (" + tables_->source + ", " + std::to_string(tables_->bytes_of_id.size()) + " tokens)";
}

// --------------------------------------------------------------------------------------- model folder

FolderTokenizer tokenizer_for_folder(const fs::path& dir, std::int64_t model_vocab_size) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw ValueError(dir.string() + ": not a folder");
    const fs::path vocab = dir / "vocab.json", merges = dir / "merges.txt", tokenizer_json = dir / "tokenizer.json";
    const bool has_vocab = fs::exists(vocab, ec), has_merges = fs::exists(merges, ec), has_json = fs::exists(tokenizer_json, ec);

    FolderTokenizer out;
    fs::path file;  // the one named in a size error
    if (has_json) {
        out.tokenizer = std::make_unique<HfTokenizer>(HfTokenizer::from_folder(dir));
        file = tokenizer_json;
    } else if (has_vocab && has_merges) {
        out.tokenizer = std::make_unique<Gpt2Tokenizer>(Gpt2Tokenizer::from_files(vocab, merges));
        file = vocab;
    } else if (has_vocab || has_merges) {
        throw FormatError(dir.string() + ": has " + (has_vocab ? "vocab.json but no merges.txt" : "merges.txt but no vocab.json") +
                              ", and no tokenizer.json");
    } else {
        if (model_vocab_size < 256)
            throw ValueError(dir.string() + " has no vocab.json + merges.txt or tokenizer.json, and raw bytes as token ids need a vocab_size of 256, "
                             "but the model's is " + std::to_string(model_vocab_size));
        out.tokenizer = std::make_unique<ByteTokenizer>();
        out.warnings.push_back(dir.string() + " has no vocab.json + merges.txt or tokenizer.json: using raw bytes as token ids");
        return out;
    }
    if (out.tokenizer->vocab_size() > model_vocab_size)
        throw ValueError(file.string() + ": the tokenizer's largest id is " + std::to_string(out.tokenizer->vocab_size() - 1) +
                         ", but the model's vocab_size is " + std::to_string(model_vocab_size));
    return out;
}

}  // namespace remat::text
