// BERT's tokenizer: vocab.txt and tokenizer_config.json, special tokens, greedy WordPiece.
// The Unicode steps (BasicTokenizer) are in bert_basic.cpp.
#include "remat/text/wordpiece.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "remat/core/error.hpp"
#include "src/text/added_tokens.hpp"
#include "src/text/bert_basic.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace detail {

// BertTokenizer's special tokens, in the order of its arguments.
constexpr std::string_view bert_specials[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
constexpr std::string_view unk = "[UNK]";
constexpr std::size_t max_input_chars_per_word = 100;

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct WordPieceTables {
    std::vector<std::string> tokens;  // by id
    std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> id_of;
    std::size_t longest = 0;            // code points of the longest token: no match is longer
    std::vector<AddedToken> specials;   // those of bert_specials in the vocabulary
    std::vector<std::string> never_split;  // the specials' text, and tokenizer_config.json's never_split
    BasicOptions basic;
    std::int32_t unk_id = 0;
    std::string source;  // "vocab.txt"
};

}  // namespace detail

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& problem) { throw FormatError(where + ": " + problem); }

std::string in_quotes(std::string_view s) {
    constexpr std::size_t longest = 60;
    std::string q = json(std::string(s.substr(0, longest))).dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > longest) q.insert(q.size() - 1, "...");
    return q;
}

std::size_t code_points(std::string_view s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

// load_vocab: readlines() in text mode (universal newlines), each line less its "\n", id = index.
std::vector<std::string> read_lines(const fs::path& file) {
    const std::string text = detail::read_file(file);
    std::vector<std::string> lines;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find_first_of("\r\n", start);
        if (end == std::string::npos) end = text.size();
        lines.emplace_back(text, start, end - start);
        start = end + (text.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    }
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
}

// A special-token setting: "[UNK]" or {"content": "[UNK]", ...} (AddedToken's serialisation).
void expect_token(const json& config, const char* key, std::string_view expected, const std::string& file) {
    if (!config.contains(key) || config[key].is_null()) return;
    const json& v = config[key];
    const json& content = v.is_object() && v.contains("content") ? v["content"] : v;
    if (!content.is_string() || content.get_ref<const std::string&>() != expected)
        fail(file, std::string(key) + " is " + v.dump(-1, ' ', false, json::error_handler_t::replace) + "; only BERT's " +
                       in_quotes(expected) + " is supported");
}

bool flag(const json& config, const char* key, bool fallback, const std::string& file) {
    if (!config.contains(key) || config[key].is_null()) return fallback;
    if (!config[key].is_boolean()) fail(file, std::string(key) + " is " + config[key].dump() + ", expected true or false");
    return config[key].get<bool>();
}

}  // namespace

WordPieceOptions WordPieceTokenizer::read_options(const fs::path& tokenizer_config_json) {
    const std::string file = tokenizer_config_json.string();
    const json config = detail::read_json(tokenizer_config_json);
    if (!config.is_object()) fail(file, "expected a JSON object");
    WordPieceOptions o;
    o.do_lower_case = flag(config, "do_lower_case", true, file);
    if (config.contains("strip_accents") && !config["strip_accents"].is_null())
        o.strip_accents = flag(config, "strip_accents", false, file);
    o.tokenize_chinese_chars = flag(config, "tokenize_chinese_chars", true, file);
    if (!flag(config, "do_basic_tokenize", true, file))
        fail(file, "do_basic_tokenize is false, which is not supported (remat runs BERT's basic tokenizer always)");
    if (config.contains("never_split") && !config["never_split"].is_null()) {
        const json& list = config["never_split"];
        if (!list.is_array()) fail(file, "never_split is not a list of strings");
        for (const json& w : list) {
            if (!w.is_string()) fail(file, "never_split is not a list of strings");
            o.never_split.push_back(w.get<std::string>());
        }
    }
    expect_token(config, "unk_token", "[UNK]", file);
    expect_token(config, "sep_token", "[SEP]", file);
    expect_token(config, "pad_token", "[PAD]", file);
    expect_token(config, "cls_token", "[CLS]", file);
    expect_token(config, "mask_token", "[MASK]", file);
    if (config.contains("additional_special_tokens") && !config["additional_special_tokens"].is_null() &&
        !config["additional_special_tokens"].empty())
        fail(file, "additional_special_tokens are not supported (only BERT's five special tokens are)");
    return o;
}

WordPieceTokenizer WordPieceTokenizer::from_vocab(const fs::path& vocab_txt, WordPieceOptions options) {
    const std::string file = vocab_txt.string();
    auto t = std::make_shared<detail::WordPieceTables>();
    t->source = vocab_txt.filename().string();
    t->tokens = read_lines(vocab_txt);
    if (t->tokens.empty()) fail(file, "no tokens (expected one WordPiece token a line)");
    t->id_of.reserve(t->tokens.size());
    for (std::size_t i = 0; i < t->tokens.size(); ++i) {
        const std::string& token = t->tokens[i];
        const std::string where = file + ":" + std::to_string(i + 1);
        if (token.empty()) fail(where, "empty line (each line is one token)");
        if (!detail::is_utf8(token)) fail(where, "not valid UTF-8");
        if (auto [it, fresh] = t->id_of.emplace(token, static_cast<std::int32_t>(i)); !fresh)
            fail(where, "token " + in_quotes(token) + " is also on line " + std::to_string(it->second + 1));
        t->longest = std::max(t->longest, code_points(token));
    }
    for (const std::string_view special : detail::bert_specials)
        if (auto it = t->id_of.find(special); it != t->id_of.end()) {
            t->specials.push_back({std::string(special), it->second});
            t->never_split.emplace_back(special);
        }
    auto it = t->id_of.find(detail::unk);
    if (it == t->id_of.end()) fail(file, "has no \"[UNK]\" token, which WordPiece gives to words it cannot cover");
    t->unk_id = it->second;
    for (std::string& w : options.never_split) t->never_split.push_back(std::move(w));
    t->basic = {options.do_lower_case, options.strip_accents.value_or(options.do_lower_case), options.tokenize_chinese_chars};
    return WordPieceTokenizer(std::move(t));
}

namespace {

// WordpieceTokenizer.tokenize of one word.
void wordpiece(const detail::WordPieceTables& t, std::string_view word, std::string& key, std::vector<std::int64_t>& ids) {
    std::vector<std::size_t> at;  // byte offset of each code point, and the end
    for (std::size_t i = 0; i < word.size(); ++i)
        if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) at.push_back(i);
    const std::size_t n = at.size();
    at.push_back(word.size());
    if (n > detail::max_input_chars_per_word) {
        ids.push_back(t.unk_id);
        return;
    }
    const std::size_t first = ids.size();
    for (std::size_t start = 0; start < n;) {
        std::size_t end = std::min(n, start + t.longest);
        for (; end > start; --end) {
            key.assign(start > 0 ? "##" : "");
            key.append(word.substr(at[start], at[end] - at[start]));
            if (auto it = t.id_of.find(key); it != t.id_of.end()) {
                ids.push_back(it->second);
                break;
            }
        }
        if (end == start) {  // no piece continues the word here: the whole word is unknown
            ids.resize(first);
            ids.push_back(t.unk_id);
            return;
        }
        start = end;
    }
}

}  // namespace

std::vector<std::int64_t> WordPieceTokenizer::encode(std::string_view text) const {
    const detail::WordPieceTables& t = *tables_;
    std::string repaired;
    text = detail::as_utf8(text, repaired);
    std::vector<std::int64_t> ids;
    ids.reserve(text.size() / 4 + 16);
    std::vector<std::string> words;
    std::string key;
    auto encode_plain = [&](std::string_view segment) {
        words.clear();
        detail::basic_tokenize(segment, t.basic, t.never_split, words);
        for (const std::string& w : words) wordpiece(t, w, key, ids);
    };
    detail::split_added(text, t.specials, encode_plain, [&](std::int32_t id) { ids.push_back(id); });
    return ids;
}

std::string WordPieceTokenizer::decode(std::span<const std::int64_t> ids) const {
    const detail::WordPieceTables& t = *tables_;
    // " ".join(tokens).replace(" ##", "").strip(): a "##" piece joins the one before it.
    std::string joined;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= vocab_size())
            throw ValueError("decode: token id " + std::to_string(ids[i]) + " is outside the vocabulary [0, " +
                             std::to_string(vocab_size()) + ")");
        if (i > 0) joined += ' ';
        joined += t.tokens[static_cast<std::size_t>(ids[i])];
    }
    std::string out;
    out.reserve(joined.size());
    for (std::size_t i = 0; i < joined.size();) {
        if (joined.compare(i, 3, " ##") == 0) {
            i += 3;
        } else {
            out += joined[i++];
        }
    }
    const std::size_t begin = out.find_first_not_of(" \t\n\r\v\f");
    if (begin == std::string::npos) return {};
    return out.substr(begin, out.find_last_not_of(" \t\n\r\v\f") + 1 - begin);
}

std::vector<std::int64_t> WordPieceTokenizer::encode_with_special_tokens(std::string_view text) const {
    std::vector<std::int64_t> ids = encode(text);
    if (const auto cls = id_of("[CLS]")) ids.insert(ids.begin(), *cls);
    if (const auto sep = id_of("[SEP]")) ids.push_back(*sep);
    return ids;
}

std::string WordPieceTokenizer::decode_as_hf(std::span<const std::int64_t> ids, bool skip_special_tokens) const {
    if (!skip_special_tokens) return decode(ids);
    const std::vector<std::int64_t> special = special_ids();
    std::vector<std::int64_t> kept;
    for (const std::int64_t id : ids)
        if (std::find(special.begin(), special.end(), id) == special.end()) kept.push_back(id);
    return decode(kept);
}

std::int64_t WordPieceTokenizer::vocab_size() const { return static_cast<std::int64_t>(tables_->tokens.size()); }

std::string WordPieceTokenizer::describe() const {
    return "BERT WordPiece (" + tables_->source + ", " + std::to_string(tables_->tokens.size()) + " tokens, " +
           (tables_->basic.lower ? "uncased" : "cased") + ")";
}

std::optional<std::int64_t> WordPieceTokenizer::document_separator() const { return id_of("[SEP]"); }

std::size_t WordPieceTokenizer::last_safe_cut(std::string_view text) const {
    for (std::size_t p = text.size(); p-- > 1;)
        if (text[p] == ' ' || text[p] == '\t' || text[p] == '\n' || text[p] == '\r') return p;
    return 0;
}

std::optional<std::int64_t> WordPieceTokenizer::id_of(std::string_view token) const {
    auto it = tables_->id_of.find(token);
    if (it == tables_->id_of.end()) return std::nullopt;
    return it->second;
}

std::vector<std::int64_t> WordPieceTokenizer::special_ids() const {
    std::vector<std::int64_t> ids;
    for (const detail::AddedToken& s : tables_->specials) ids.push_back(s.id);
    return ids;
}

FolderTokenizer wordpiece_for_folder(const fs::path& dir, std::int64_t model_vocab_size) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw ValueError(dir.string() + ": not a folder");
    const fs::path vocab = dir / "vocab.txt", config = dir / "tokenizer_config.json";
    if (!fs::exists(vocab, ec))
        throw FormatError(vocab.string() + ": missing; a BERT folder needs its WordPiece vocabulary (remat does not read "
                                           "BERT's tokenizer.json alone)");
    const WordPieceOptions options = fs::exists(config, ec) ? WordPieceTokenizer::read_options(config) : WordPieceOptions{};
    FolderTokenizer out;
    out.tokenizer = std::make_unique<WordPieceTokenizer>(WordPieceTokenizer::from_vocab(vocab, options));
    if (out.tokenizer->vocab_size() > model_vocab_size)
        throw ValueError(vocab.string() + ": the tokenizer's largest id is " + std::to_string(out.tokenizer->vocab_size() - 1) +
                         ", but the model's vocab_size is " + std::to_string(model_vocab_size));
    return out;
}

}  // namespace remat::text
