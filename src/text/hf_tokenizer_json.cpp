// Reading tokenizer.json and tokenizer_config.json into HfTables. Semantics are those of HF's tokenizers
// (the Rust library behind every "fast" tokenizer) and, for tokenizer_config.json, of transformers
// 4.57; docs/tokenizer.md lists what is read and what is refused.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "remat/core/in_quotes.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/hf_json.hpp"
#include "src/text/hf_tables.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text::detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A field that must be absent, null or one of the values that change nothing.
void expect_no_effect(const json& object, const char* key, std::initializer_list<json> harmless, const std::string& where) {
    if (!object.contains(key) || object[key].is_null()) return;
    for (const json& h : harmless)
        if (object[key] == h) return;
    fail(where, std::string(key) + " " + excerpt(object[key]) + " is not supported");
}

// Checks that the model is one remat reads, with its vocabulary and merges.
void check_model(const json& root, const std::string& file, ModelTables& tables) {
    const json& model = root["model"];
    const std::string where = file + ": model";
    const std::string type = model.contains("type") ? type_of(model, where) : "BPE";  // tokenizers infers BPE from its fields
    if (type != "BPE")
        fail(where, "type " + in_quotes(type) + " is not supported (remat reads BPE from tokenizer.json" +
                        (type == "WordPiece" ? std::string("; BERT's WordPiece comes from vocab.txt") : std::string()) + ")");
    expect_no_effect(model, "dropout", {0.0}, where);
    expect_no_effect(model, "continuing_subword_prefix", {""}, where);
    expect_no_effect(model, "end_of_word_suffix", {""}, where);
    if (!model.contains("vocab")) fail(where, "no \"vocab\"");
    if (!model.contains("merges")) fail(where, "no \"merges\"");
    tables.check(model, file);
}

// The rest of the model; takes the vocabulary's map.
HfBpe read_model(const json& root, const std::string& file, ModelTables& tables) {
    const json& model = root["model"];
    const std::string where = file + ": model";
    Vocabulary& vocab = tables.vocab;
    HfBpe bpe;
    bpe.fuse_unk = bool_field(model, "fuse_unk", false, where);
    bpe.byte_fallback = bool_field(model, "byte_fallback", false, where);
    bpe.ignore_merges = bool_field(model, "ignore_merges", false, where);
    if (model.contains("unk_token") && !model["unk_token"].is_null()) {
        const std::string unk = string_field(model, "unk_token", where);
        auto it = vocab.id_of.find(unk);
        if (it == vocab.id_of.end()) fail(where, "unk_token " + in_quotes(unk) + " is not in model.vocab");
        bpe.unk = it->second;
    }
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        auto it = vocab.id_of.find(name);
        bpe.byte_tokens[b] = it == vocab.id_of.end() ? -1 : it->second;
    }
    bpe.merges = resolve_merges(vocab, tables.merges, "model.vocab", tables.merge_where());
    tables.merges = {};
    bpe.id_of = std::move(vocab.id_of);
    vocab = {};
    return bpe;
}

// The ids a TemplateProcessing's "single" template puts around the sequence $A.
void read_template(const json& p, const std::string& where, std::vector<std::int64_t>& prefix, std::vector<std::int64_t>& suffix) {
    const json& single = list_field(p, "single", where);
    const json specials = p.contains("special_tokens") && p["special_tokens"].is_object() ? p["special_tokens"] : json::object();
    std::vector<std::int64_t> before, after;
    bool seen_sequence = false;
    for (std::size_t i = 0; i < single.size(); ++i) {
        const std::string here = where + ".single[" + std::to_string(i) + "]";
        const json& item = single[i];
        if (item.is_object() && item.contains("Sequence")) {
            const json& s = item["Sequence"];
            if (seen_sequence || !s.is_object() || s.value("id", json()) != "A")
                fail(here, "a single template must hold the sequence A exactly once, got " + excerpt(item));
            seen_sequence = true;
        } else if (item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].is_object()) {
            const std::string name = string_field(item["SpecialToken"], "id", here);
            if (!specials.contains(name)) fail(here, "special token " + in_quotes(name) + " is not in special_tokens");
            const json& ids = list_field(specials[name], "ids", where + ".special_tokens." + name);
            for (const json& id : ids) {
                if (!id.is_number_unsigned() || id.get<std::uint64_t>() > std::numeric_limits<std::int32_t>::max())
                    fail(where + ".special_tokens." + name, "ids must be integers in [0, 2^31), got " + excerpt(id));
                (seen_sequence ? after : before).push_back(id.get<std::int64_t>());
            }
        } else {
            fail(here, "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}, got " + excerpt(item));
        }
    }
    if (!seen_sequence) fail(where + ".single", "the template has no sequence A");
    prefix.insert(prefix.begin(), before.begin(), before.end());  // an outer processor wraps what came before
    suffix.insert(suffix.end(), after.begin(), after.end());
}

void read_post_processor(const json& p, const std::string& where, std::vector<std::int64_t>& prefix, std::vector<std::int64_t>& suffix) {
    if (p.is_null()) return;
    const std::string type = type_of(p, where);
    if (type == "Sequence") {
        const json& list = list_field(p, "processors", where);
        for (std::size_t i = 0; i < list.size(); ++i)
            read_post_processor(list[i], where + ".processors[" + std::to_string(i) + "]", prefix, suffix);
    } else if (type == "TemplateProcessing") {
        read_template(p, where, prefix, suffix);
    } else if (type != "ByteLevel") {  // ByteLevel only trims offsets
        fail(where, "post-processor " + in_quotes(type) + " is not supported (remat reads TemplateProcessing, ByteLevel and Sequence)");
    }
}

// "<s>", {"content": "<s>", ...} (AddedToken's serialisation) or null.
std::optional<std::string> token_setting(const json& config, const char* key, const std::string& where) {
    if (!config.contains(key) || config[key].is_null()) return std::nullopt;
    const json& v = config[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    fail(where, std::string(key) + " must be a string or {\"content\": ...}, got " + excerpt(v));
}

// transformers' LlamaTokenizerFast (and the classes built on it) rebuilds the post-processor from
// add_bos_token (default true) and add_eos_token (default false) whatever tokenizer.json says
// (update_post_processor); other classes keep tokenizer.json's.
void read_config(HfTables& t, const json& config, const std::string& where) {
    if (!config.is_object()) fail(where, "expected a JSON object, got " + excerpt(config));
    t.clean_up_tokenization_spaces = bool_field(config, "clean_up_tokenization_spaces", false, where);
    const auto bos = token_setting(config, "bos_token", where), eos = token_setting(config, "eos_token", where);
    auto resolve = [&](const std::optional<std::string>& token, const char* key) -> std::optional<std::int32_t> {
        if (!token) return std::nullopt;
        const auto id = t.id_of(*token);
        if (!id) fail(where, std::string(key) + " " + in_quotes(*token) + " is not in the tokenizer's vocabulary");
        return id;
    };
    t.bos = resolve(bos, "bos_token");
    t.eos = resolve(eos, "eos_token");
    const std::string cls = string_field(config, "tokenizer_class", "", where);
    static const char* rebuilt[] = {"LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer", "CodeLlamaTokenizerFast",
                                    "GemmaTokenizer", "GemmaTokenizerFast"};
    if (std::find(std::begin(rebuilt), std::end(rebuilt), cls) == std::end(rebuilt)) return;
    const bool add_bos = bool_field(config, "add_bos_token", true, where), add_eos = bool_field(config, "add_eos_token", false, where);
    if (add_bos && !t.bos) fail(where, "add_bos_token is true but there is no bos_token");
    if (add_eos && !t.eos) fail(where, "add_eos_token is true but there is no eos_token");
    t.prefix.clear(), t.suffix.clear();
    if (add_bos) t.prefix.push_back(*t.bos);
    if (add_eos) t.suffix.push_back(*t.eos);
}

}  // namespace

std::optional<std::int32_t> HfTables::id_of(std::string_view token) const {
    const std::string key(token);
    if (auto it = added_id_of.find(key); it != added_id_of.end()) return it->second;
    auto it = model.id_of.find(key);
    return it == model.id_of.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
}

std::shared_ptr<const HfTables> read_hf_tokenizer(const fs::path& tokenizer_json, const std::optional<fs::path>& tokenizer_config_json) {
    const std::string file = tokenizer_json.string();
    ModelTables tables;
    const json root = read_tokenizer_json_file(tokenizer_json, tables);
    auto t = std::make_shared<HfTables>();
    t->source = tokenizer_json.filename().string();

    check_model(root, file, tables);
    std::vector<AddedToken> added = read_added_tokens(root, tables.vocab, file);
    t->model = read_model(root, file, tables);
    const json null;
    t->normalizers = read_normalizers(root.value("normalizer", null), file + ": normalizer");
    t->pre_tokenizers = read_pre_tokenizers(root.value("pre_tokenizer", null), file + ": pre_tokenizer");
    t->decoders = read_decoders(root.value("decoder", null), file + ": decoder");
    t->has_decoder = !root.value("decoder", null).is_null();
    read_post_processor(root.value("post_processor", null), file + ": post_processor", t->prefix, t->suffix);

    for (const auto& [token, id] : t->model.id_of) {
        t->token_of.emplace(id, &token);
        t->vocab_size = std::max<std::int64_t>(t->vocab_size, std::int64_t{id} + 1);
    }
    bool plain_added = true;
    for (AddedToken& a : added) {
        t->token_of[a.id] = &t->added_id_of.emplace(a.content, a.id).first->first;
        t->vocab_size = std::max<std::int64_t>(t->vocab_size, std::int64_t{a.id} + 1);
        if (a.special) t->special.insert(a.id);
        plain_added = plain_added && !a.lstrip && !a.rstrip && !a.single_word;
        if (a.normalized && !t->normalizers.empty()) {
            a.content = normalize(t->normalizers, a.content);  // matched in the normalized text
            t->normalized_added.push_back(std::move(a));
        } else {
            t->raw_added.push_back(std::move(a));
        }
    }
    // HF's decode would drop such an id silently, and a model has no row for it: refused here.
    for (const auto* ids : {&t->prefix, &t->suffix})
        for (const std::int64_t id : *ids)
            if (!t->token_of.contains(static_cast<std::int32_t>(id)))
                fail(file + ": post_processor", "special token id " + std::to_string(id) + " is no token's id (neither model.vocab nor added_tokens has it)");

    const auto* byte_level = t->pre_tokenizers.size() == 1 ? std::get_if<ByteLevel>(&t->pre_tokenizers[0]) : nullptr;
    t->gpt2_pipeline = t->normalizers.empty() && byte_level && byte_level->use_regex && !byte_level->add_prefix_space && plain_added &&
                       !t->model.ignore_merges;

    std::error_code ec;
    if (tokenizer_config_json && fs::exists(*tokenizer_config_json, ec)) {
        read_config(*t, read_json(*tokenizer_config_json), tokenizer_config_json->string());
        t->source += " + " + tokenizer_config_json->filename().string();
    }
    return t;
}

}  // namespace remat::text::detail
