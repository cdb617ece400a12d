// vocab.json + merges.txt (GPT2Tokenizer's files) and tokenizer.json (HF tokenizers' format), and the
// file and JSON reading the WordPiece reader shares.
//
// Where HF's two implementations disagree on a malformed file, the stricter one is followed: the slow
// GPT2Tokenizer drops merges.txt's first line whatever it is, ignores lines that are not two symbols and
// maps tokens missing from the vocabulary to "<|endoftext|>" when encoding; tokenizers' BPE skips
// "#version" lines, rejects any line that is not two symbols and rejects a merge whose parts or result are
// not in the vocabulary when loading. Both keep the last of duplicate merges (its rank is the later one),
// and so does this reader.
#include "src/text/tokenizer_files.hpp"

#include "src/core/strict_json.hpp"

#include <array>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "remat/core/error.hpp"
#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"
#include "src/text/byte_level.hpp"

namespace remat::text::detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view end_of_text = "<|endoftext|>";

// GPT-2's tokenizer.json is 1.4 MB and the largest HF tokenizers tens of megabytes; this bounds a hostile one.
constexpr std::size_t max_tokenizer_file_bytes = std::size_t{256} << 20;

}  // namespace

[[noreturn]] void fail(const std::string& where, const std::string& problem) { throw FormatError(where + ": " + problem); }

std::string excerpt(const json& v) {
    constexpr std::size_t longest = 80;
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > longest) s = s.substr(0, longest) + "...";
    return s;
}

namespace {

// Strictly (strict_json): a duplicate key at any depth is refused — nlohmann would keep the last
// silently, and a vocabulary that gives one token two ids is broken.
json parse_json(const fs::path& file, const std::string& text) { return strict_json::parse<json>(text, file.string()); }

}  // namespace

std::string read_file(const fs::path& file) { return remat::read_file(file, max_tokenizer_file_bytes, "a tokenizer file"); }

json read_json(const fs::path& file) { return parse_json(file, read_file(file)); }

namespace {

// Gives a token of the vocabulary its id, value; the token is already a key of v.id_of.
void assign_id(Vocabulary& v, std::pair<const std::string, std::int32_t>& entry, const json& value, const std::string& where) {
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() > std::numeric_limits<std::int32_t>::max())
        fail(where, "token id " + excerpt(value) + " of " + in_quotes(entry.first) + " is not an integer in [0, 2^31)");
    entry.second = static_cast<std::int32_t>(value.get<std::uint64_t>());
    if (auto [other, fresh] = v.token_of.emplace(entry.second, &entry.first); !fresh)
        fail(where, "tokens " + in_quotes(*other->second) + " and " + in_quotes(entry.first) + " both have id " + std::to_string(entry.second));
}

}  // namespace

Vocabulary read_vocabulary(const json& object, const std::string& where) {
    if (!object.is_object()) fail(where, "expected a JSON object of token -> id, got " + excerpt(object));
    Vocabulary v;
    v.id_of.reserve(object.size());
    v.token_of.reserve(object.size());
    for (const auto& [token, value] : object.items()) assign_id(v, *v.id_of.emplace(token, 0).first, value, where);  // keys are unique: parse_json checked
    return v;
}

// One "a b" merge: exactly two non-empty symbols separated by one space.
std::optional<MergeText> split_merge(std::string_view line) {
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() || line.find(' ', space + 1) != std::string_view::npos)
        return std::nullopt;
    return MergeText{std::string(line.substr(0, space)), std::string(line.substr(space + 1)), 0};
}

namespace {

std::vector<MergeText> read_merges_txt(const fs::path& file) {
    const std::string text = read_file(file);
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + start, end - start);
        if (line.ends_with('\r')) line.remove_suffix(1);
        lines.push_back(line);
        start = end + 1;
    }
    while (!lines.empty() && lines.back().empty()) lines.pop_back();  // blank trailing lines

    std::vector<MergeText> merges;
    merges.reserve(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string where = file.string() + ":" + std::to_string(i + 1);
        if (lines[i].starts_with("#version")) continue;
        if (!is_utf8(lines[i])) fail(where, "not valid UTF-8");
        auto merge = split_merge(lines[i]);
        if (!merge) fail(where, in_quotes(lines[i]) + " is not two symbols separated by one space");
        merge->position = i + 1;
        merges.push_back(std::move(*merge));
    }
    return merges;
}

}  // namespace

MergeText merge_of(const json& m, std::size_t index, const std::string& where) {
    std::optional<MergeText> merge;
    if (m.is_string())  // tokenizers < 0.20: "a b"
        merge = split_merge(m.get_ref<const std::string&>());
    else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string() && !m[0].empty() && !m[1].empty())
        merge = MergeText{m[0].get<std::string>(), m[1].get<std::string>(), 0};  // ["a", "b"]
    if (!merge) fail(where + "[" + std::to_string(index) + "]", excerpt(m) + " is not two symbols, as \"a b\" or [\"a\", \"b\"]");
    merge->position = index;
    return std::move(*merge);
}

std::vector<MergeText> read_merges_json(const json& array, const std::string& where) {
    if (!array.is_array()) fail(where, "expected a list of merges, got " + excerpt(array));
    std::vector<MergeText> merges;
    merges.reserve(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) merges.push_back(merge_of(array[i], i, where));
    return merges;
}

namespace {

// The vocabulary's ids by token, flat: resolving Llama 3's 280,147 merges looks up 840,441 tokens, and
// each lookup in the node-based id_of costs several cache misses. Open addressing, at most half full;
// a slot holds the token's hash, so a probe touches a token's text only when the hashes agree.
class TokenIndex {
public:
    explicit TokenIndex(const Vocabulary& vocab) {
        std::size_t capacity = 16;
        while (capacity < 2 * vocab.id_of.size()) capacity *= 2;
        slots_.resize(capacity);
        mask_ = capacity - 1;
        for (const auto& [token, id] : vocab.id_of) {
            const std::size_t h = hash(token);
            std::size_t i = h & mask_;
            while (slots_[i].token) i = (i + 1) & mask_;
            slots_[i] = {h, &token, id};
        }
    }
    const std::int32_t* find(std::string_view token) const {
        const std::size_t h = hash(token);
        for (std::size_t i = h & mask_; slots_[i].token; i = (i + 1) & mask_)
            if (slots_[i].hash == h && *slots_[i].token == token) return &slots_[i].id;
        return nullptr;
    }

private:
    static std::size_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
    struct Slot {
        std::size_t hash = 0;
        const std::string* token = nullptr;
        std::int32_t id = 0;
    };
    std::vector<Slot> slots_;
    std::size_t mask_ = 0;
};

}  // namespace

MergeTable resolve_merges(const Vocabulary& vocab, const std::vector<MergeText>& merges, const std::string& vocab_name,
                          const std::function<std::string(std::size_t position)>& where) {
    const TokenIndex index(vocab);
    auto id = [&](const MergeText& m, const std::string& token, const std::string& what) {
        const std::int32_t* found = index.find(token);
        if (!found)
            fail(where(m.position), in_quotes(m.left + " " + m.right) + ": " + what + in_quotes(token) + " is not in " + vocab_name);
        return *found;
    };
    MergeTable table;
    table.reserve(merges.size());
    std::string joined;
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
        const MergeText& m = merges[rank];
        joined.assign(m.left).append(m.right);
        const std::int32_t left = id(m, m.left, ""), right = id(m, m.right, ""), merged = id(m, joined, "the merged token ");
        table.set(left, right, {static_cast<std::int32_t>(rank), merged});  // a repeat takes the later rank, in both readers of HF's
    }
    return table;
}

namespace {

// Resolves the merges and bytes against the vocabulary. vocab_where starts messages about the vocabulary
// ("x/vocab.json", "x/tokenizer.json: model.vocab"); vocab_name ends those about a merge ("vocab.json").
std::shared_ptr<const Gpt2Tables> build(const Vocabulary& vocab, const std::string& vocab_where, const std::string& vocab_name,
                                        const std::vector<MergeText>& merges, const std::function<std::string(std::size_t)>& merge_where,
                                        std::vector<AddedToken> added, std::string source) {
    auto t = std::make_shared<Gpt2Tables>();
    t->source = std::move(source);

    auto id = [&](const std::string& token) {
        auto it = vocab.id_of.find(token);
        return it == vocab.id_of.end() ? std::optional<std::int32_t>() : it->second;
    };
    t->merges = resolve_merges(vocab, merges, vocab_name, merge_where);

    std::vector<int> missing;
    for (int b = 0; b < 256; ++b) {
        const auto found = id(byte_symbol_utf8(static_cast<std::uint8_t>(b)));
        if (found)
            t->byte_id[b] = *found;
        else
            missing.push_back(b);
    }
    if (!missing.empty()) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", missing[0]);
        fail(vocab_where, std::to_string(missing.size()) + " of the 256 byte symbols have no token, the first is " +
                              in_quotes(byte_symbol_utf8(static_cast<std::uint8_t>(missing[0]))) + " (byte " + hex +
                              "); a byte-level BPE vocabulary needs them all");
    }

    t->bytes_of_id.reserve(vocab.id_of.size() + added.size());
    for (const auto& [token, i] : vocab.id_of) {
        t->bytes_of_id.emplace(i, token_bytes(token));
        t->vocab_size = std::max<std::int64_t>(t->vocab_size, std::int64_t{i} + 1);
    }
    for (const AddedToken& a : added) {
        t->bytes_of_id.emplace(a.id, a.content);  // no-op when the vocabulary has it
        t->vocab_size = std::max<std::int64_t>(t->vocab_size, std::int64_t{a.id} + 1);
    }
    t->added = std::move(added);
    return t;
}

// A field that must be absent, null, or the one value GPT-2 uses.
void expect_default(const json& object, const char* key, const json& allowed, const std::string& where) {
    if (!object.contains(key)) return;
    const json& v = object[key];
    if (v.is_null() || v == allowed) return;
    fail(where, std::string(key) + " is " + excerpt(v) + "; only " + allowed.dump() + " (GPT-2's) is supported");
}

}  // namespace

json read_tokenizer_json_file(const fs::path& tokenizer_json, ModelTables& tables) {
    const std::string file = tokenizer_json.string();
    tables.file = file;
    const std::string merges_where = file + ": model.merges";
    std::array<strict_json::Streamed<json>, 2> streamed = {
        strict_json::Streamed<json>{"model.vocab", true,
                                    [&](const std::string* token, std::size_t, json&& id) {
                                        auto [entry, fresh] = tables.vocab.id_of.emplace(*token, 0);
                                        if (!fresh) throw FormatError(file + ": duplicate key " + in_quotes(*token) + " in model.vocab");
                                        tables.vocab_ids.emplace_back(&*entry, std::move(id));  // checked once the file is parsed
                                    },
                                    true},
        strict_json::Streamed<json>{"model.merges", false, [&](const std::string*, std::size_t index, json&& merge) {
                                        tables.merges.push_back(merge_of(merge, index, merges_where));
                                    }}};
    json root = strict_json::parse<json>(read_file(tokenizer_json), file, streamed);
    tables.vocab_streamed = streamed[0].seen;
    tables.merges_streamed = streamed[1].seen;
    if (!root.is_object()) fail(file, "expected a JSON object, got " + excerpt(root));
    if (!root.contains("model") || !root["model"].is_object()) fail(file, "no \"model\" object");
    return root;
}

void ModelTables::check(const json& model, const std::string& where) {
    for (auto& [entry, id] : vocab_ids) assign_id(vocab, *entry, id, where + ": model.vocab");
    vocab_ids = {};
    // Not streamed: absent, or not of the kind; read_vocabulary and read_merges_json name what it is.
    if (!vocab_streamed && model.contains("vocab")) (void)read_vocabulary(model["vocab"], where + ": model.vocab");
    if (!merges_streamed && model.contains("merges")) (void)read_merges_json(model["merges"], where + ": model.merges");
}

std::function<std::string(std::size_t)> ModelTables::merge_where() const {
    return [file = file](std::size_t index) { return file + ": model.merges[" + std::to_string(index) + "]"; };
}

std::vector<AddedToken> read_added_tokens(const json& root, const Vocabulary& vocab, const std::string& file) {
    std::vector<AddedToken> added;
    if (!root.contains("added_tokens") || root["added_tokens"].is_null()) return added;
    const json& list = root["added_tokens"];
    if (!list.is_array()) fail(file, "added_tokens is not a list");
    std::unordered_map<std::int32_t, std::size_t> seen;  // id -> index in the list
    std::unordered_set<std::string> contents;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& a = list[i];
        const std::string where = file + ": added_tokens[" + std::to_string(i) + "]";
        if (!a.is_object() || !a.contains("id") || !a.contains("content") || !a["content"].is_string() ||
            a["content"].get_ref<const std::string&>().empty())
            fail(where, "expected an object with an \"id\" and a non-empty \"content\"");
        const json& id = a["id"];
        const std::string& content = a["content"].get_ref<const std::string&>();
        if (!id.is_number_unsigned() || id.get<std::uint64_t>() > std::numeric_limits<std::int32_t>::max())
            fail(where, "id " + excerpt(id) + " of " + in_quotes(content) + " is not an integer in [0, 2^31)");
        auto flag = [&](const char* key, bool absent) {
            if (!a.contains(key) || a[key].is_null()) return absent;
            if (!a[key].is_boolean()) fail(where, std::string(key) + " of " + in_quotes(content) + " is " + excerpt(a[key]) + ", not true or false");
            return a[key].get<bool>();
        };
        const bool special = flag("special", false);
        const auto i32 = static_cast<std::int32_t>(id.get<std::uint64_t>());
        if (auto it = vocab.id_of.find(content); it != vocab.id_of.end() && it->second != i32)
            fail(where, in_quotes(content) + " has id " + std::to_string(i32) + " but model.vocab gives it " + std::to_string(it->second));
        if (auto it = vocab.token_of.find(i32); it != vocab.token_of.end() && *it->second != content)
            fail(where, in_quotes(content) + " has id " + std::to_string(i32) + ", which model.vocab gives to " + in_quotes(*it->second));
        if (auto [it, fresh] = seen.emplace(i32, added.size()); !fresh)
            fail(where, in_quotes(content) + " has id " + std::to_string(i32) + ", as added_tokens[" + std::to_string(it->second) + "] has");
        if (!contents.insert(content).second) fail(where, in_quotes(content) + " is listed twice");
        added.push_back({content, i32, special, flag("normalized", !special), flag("lstrip", false), flag("rstrip", false),
                         flag("single_word", false)});
    }
    return added;
}

std::shared_ptr<const Gpt2Tables> read_vocab_and_merges(const fs::path& vocab_json, const fs::path& merges_txt) {
    const Vocabulary vocab = read_vocabulary(parse_json(vocab_json, read_file(vocab_json)), vocab_json.string());
    const std::vector<MergeText> merges = read_merges_txt(merges_txt);
    // GPT2Tokenizer registers its unk/bos/eos token, "<|endoftext|>", as an added token.
    std::vector<AddedToken> added;
    if (auto it = vocab.id_of.find(std::string(end_of_text)); it != vocab.id_of.end()) added.push_back({it->first, it->second});
    const auto line = [&](std::size_t n) { return merges_txt.string() + ":" + std::to_string(n); };
    return build(vocab, vocab_json.string(), vocab_json.filename().string(), merges, line, std::move(added),
                 vocab_json.filename().string() + " + " + merges_txt.filename().string());
}

std::shared_ptr<const Gpt2Tables> read_tokenizer_json(const fs::path& tokenizer_json) {
    const std::string file = tokenizer_json.string();
    ModelTables model_tables;
    const json root = read_tokenizer_json_file(tokenizer_json, model_tables);
    const json& model = root["model"];
    if (!model.contains("type") || model["type"] != "BPE")
        fail(file, "model.type is " + (model.contains("type") ? excerpt(model["type"]) : std::string("missing")) +
                       "; only \"BPE\" (GPT-2's byte-level BPE) is supported");
    expect_default(model, "dropout", 0.0, file + ": model");
    expect_default(model, "continuing_subword_prefix", "", file + ": model");
    expect_default(model, "end_of_word_suffix", "", file + ": model");
    expect_default(model, "byte_fallback", false, file + ": model");
    expect_default(model, "ignore_merges", false, file + ": model");
    if (root.contains("normalizer") && !root["normalizer"].is_null())
        fail(file, "normalizer " + excerpt(root["normalizer"]) + " is not supported (GPT-2 has none)");
    const json pre = root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json();
    const bool byte_level = pre.is_object() && pre.value("type", json()) == "ByteLevel" && pre.value("add_prefix_space", json()) == false &&
                            pre.value("use_regex", json(true)) == true;
    if (!byte_level)
        fail(file, "pre_tokenizer is " + excerpt(pre) +
                       "; only GPT-2's {\"type\": \"ByteLevel\", \"add_prefix_space\": false} is supported");
    if (!model.contains("vocab")) fail(file, "model has no \"vocab\"");
    if (!model.contains("merges")) fail(file, "model has no \"merges\"");

    model_tables.check(model, file);
    const Vocabulary& vocab = model_tables.vocab;
    const std::vector<MergeText>& merges = model_tables.merges;
    std::vector<AddedToken> added = read_added_tokens(root, vocab, file);
    for (std::size_t i = 0; i < added.size(); ++i)
        for (const auto& [set, flag] : {std::pair{added[i].lstrip, "lstrip"}, {added[i].rstrip, "rstrip"}, {added[i].single_word, "single_word"}})
            if (set)
                fail(file + ": added_tokens[" + std::to_string(i) + "]",
                     in_quotes(added[i].content) + " has " + flag + " true, which is not supported (GPT-2's added tokens match literally)");
    return build(vocab, file + ": model.vocab", "model.vocab", merges, model_tables.merge_where(), std::move(added),
                 tokenizer_json.filename().string());
}

}  // namespace remat::text::detail
