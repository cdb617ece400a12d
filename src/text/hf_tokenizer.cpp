#include "remat/text/hf_tokenizer.hpp"

#include "remat/core/error.hpp"
#include "src/text/added_tokens.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/hf_tables.hpp"
#include "src/text/safe_cut.hpp"

namespace remat::text {

namespace fs = std::filesystem;
using detail::AddedToken;
using detail::Piece;

HfTokenizer HfTokenizer::from_folder(const fs::path& dir) {
    return from_files(dir / "tokenizer.json", dir / "tokenizer_config.json");
}

HfTokenizer HfTokenizer::from_files(const fs::path& tokenizer_json, const std::optional<fs::path>& tokenizer_config_json) {
    return HfTokenizer(detail::read_hf_tokenizer(tokenizer_json, tokenizer_config_json));
}

namespace {

// tokenizers' added-token flags look at Rust regex classes: \s is Unicode White_Space, \w Alphabetic,
// marks, decimal numbers, connector punctuation and the joiners.
const detail::Regex& trailing_space() {
    static const detail::Regex r = detail::Regex::compile(R"(\p{White_Space}*\z)", "added tokens");
    return r;
}
const detail::Regex& leading_space() {
    static const detail::Regex r = detail::Regex::compile(R"(\A\p{White_Space}*)", "added tokens");
    return r;
}
const detail::Regex& word_at_end() {
    static const detail::Regex r = detail::Regex::compile(R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]\z)", "added tokens");
    return r;
}
const detail::Regex& word_at_start() {
    static const detail::Regex r = detail::Regex::compile(R"(\A[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}])", "added tokens");
    return r;
}

std::pair<std::size_t, std::size_t> first_match(const detail::Regex& r, std::string_view text) {
    const auto all = r.find_all(text);
    return all.empty() ? std::pair<std::size_t, std::size_t>{text.size(), text.size()} : all.front();
}

// Cuts the added tokens out of a piece, as tokenizers' AddedVocabulary::find_matches: the leftmost-longest
// occurrences; single_word drops one that touches a word character, lstrip and rstrip widen one over
// the white space beside it.
void cut_added(Piece& piece, const std::vector<AddedToken>& added, std::vector<Piece>& out) {
    const std::string_view text = piece.text;
    std::size_t from = 0;
    auto plain = [&](std::size_t begin, std::size_t end) { out.push_back({std::string(text.substr(begin, end - begin)), piece.at_start && begin == 0, -1}); };
    for (const detail::AddedMatch& m : detail::find_added(text, added, [](const AddedToken& a) -> std::string_view { return a.content; })) {
        const AddedToken& a = added[m.index];
        std::size_t begin = m.begin, end = m.end;
        if (a.single_word) {
            const bool space_before = begin == 0 || word_at_end().find_all(text.substr(0, begin)).empty();
            const bool space_after = end == text.size() || word_at_start().find_all(text.substr(end)).empty();
            if (!space_before || !space_after) continue;
        }
        if (a.lstrip) begin = std::max(first_match(trailing_space(), text.substr(0, begin)).first, from);
        if (a.rstrip) end += first_match(leading_space(), text.substr(end)).second;
        if (from < begin) plain(from, begin);
        out.push_back({std::string(text.substr(begin, end - begin)), piece.at_start && begin == 0, a.id});
        from = end;
    }
    if (from < text.size()) plain(from, text.size());
}

}  // namespace

std::vector<std::int64_t> HfTokenizer::encode_ids(std::string_view text, bool add_special_tokens) const {
    const detail::HfTables& t = *tables_;
    std::string repaired;
    text = detail::as_utf8(text, repaired);
    std::vector<Piece> pieces;
    if (!text.empty()) pieces.push_back({std::string(text), true, -1});
    if (!t.raw_added.empty()) detail::each_piece(pieces, [&](Piece& p, std::vector<Piece>& out) { cut_added(p, t.raw_added, out); });
    detail::each_piece(pieces, [&](Piece& p, std::vector<Piece>& out) {
        p.text = detail::normalize(t.normalizers, std::move(p.text));
        if (t.normalized_added.empty()) {
            if (!p.text.empty()) out.push_back(std::move(p));
        } else {
            cut_added(p, t.normalized_added, out);
        }
    });
    detail::pre_tokenize(t.pre_tokenizers, pieces);

    std::vector<std::int64_t> ids;
    ids.reserve(text.size() / 3 + 8);
    if (add_special_tokens) ids.insert(ids.end(), t.prefix.begin(), t.prefix.end());
    for (const Piece& p : pieces) {
        if (p.added_id >= 0)
            ids.push_back(p.added_id);
        else
            t.model.tokenize(p.text, ids);
    }
    if (add_special_tokens) ids.insert(ids.end(), t.suffix.begin(), t.suffix.end());
    return ids;
}

std::vector<std::int64_t> HfTokenizer::encode(std::string_view text) const { return encode_ids(text, false); }

std::vector<std::int64_t> HfTokenizer::encode_with_special_tokens(std::string_view text) const { return encode_ids(text, true); }

namespace {

std::string decode_tables(const detail::HfTables& t, std::span<const std::int64_t> ids, bool skip_special_tokens) {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (const std::int64_t id : ids) {
        if (id < 0 || id >= t.vocab_size)
            throw ValueError("decode: token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(t.vocab_size) + ")");
        const auto i32 = static_cast<std::int32_t>(id);
        if (skip_special_tokens && t.special.contains(i32)) continue;
        auto it = t.token_of.find(i32);
        if (it == t.token_of.end()) throw ValueError("decode: no token has id " + std::to_string(id));
        tokens.push_back(*it->second);
    }
    if (t.has_decoder) return detail::decode_tokens(t.decoders, std::move(tokens));
    std::string text;
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
}

// transformers' clean_up_tokenization: no space before some punctuation and English contractions.
std::string clean_up_tokenization(std::string text) {
    static const std::pair<std::string_view, std::string_view> rules[] = {
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : rules) {
        std::string out;
        std::size_t at = 0;
        for (std::size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, at)) {
            out.append(text, at, hit - at).append(to);
            at = hit + from.size();
        }
        text = out.append(text, at, std::string::npos);
    }
    return text;
}

}  // namespace

std::string HfTokenizer::decode(std::span<const std::int64_t> ids) const { return decode_tables(*tables_, ids, false); }

std::string HfTokenizer::decode_as_hf(std::span<const std::int64_t> ids, bool skip_special_tokens) const {
    std::string text = decode_tables(*tables_, ids, skip_special_tokens);
    return tables_->clean_up_tokenization_spaces ? clean_up_tokenization(std::move(text)) : text;
}

std::int64_t HfTokenizer::vocab_size() const { return tables_->vocab_size; }

bool HfTokenizer::has_id(std::int64_t id) const {
    return id >= 0 && id < tables_->vocab_size && tables_->token_of.contains(static_cast<std::int32_t>(id));
}

std::string HfTokenizer::describe() const {
    const detail::HfBpe& m = tables_->model;
    return "tokenizer.json BPE (" + tables_->source + ", " + std::to_string(tables_->token_of.size()) + " tokens" +
           (m.byte_fallback ? ", byte fallback" : "") + ")";
}

std::optional<std::int64_t> HfTokenizer::id_of(std::string_view token) const { return tables_->id_of(token); }

std::optional<std::int64_t> HfTokenizer::document_separator() const {
    if (tables_->eos) return *tables_->eos;
    return id_of("<|endoftext|>");
}

std::optional<std::int64_t> HfTokenizer::bos_id() const { return tables_->bos; }
std::optional<std::int64_t> HfTokenizer::eos_id() const { return tables_->eos; }

std::size_t HfTokenizer::last_safe_cut(std::string_view text) const {
    return tables_->gpt2_pipeline ? detail::gpt2_last_safe_cut(text, tables_->raw_added) : 0;
}

}  // namespace remat::text
