// libFuzzer target: HfTokenizer on tokenizer.json files built from a template, so that mutations reach
// past the JSON parse (fuzz_tokenizer feeds raw bytes, which rarely make a tokenizer). The input's
// bytes are drawn as choices: each component (model, normalizer, pre-tokenizer, added tokens,
// post-processor, decoder) is one of the kinds the format has — those remat reads, some it refuses, an
// unknown name, or a value of the wrong JSON type —, the vocabulary's ids may be sparse, repeated,
// negative or huge, merges may name unknown tokens or results, a Split pattern may be one that
// backtracks catastrophically; tokenizer_config.json is drawn likewise; the rest of the input is the
// text. Every input must give a tokenizer or a remat::Error; a tokenizer must encode the text (or
// refuse with a remat::Error) into ids it can decode, each below vocab_size. libFuzzer's -timeout
// bounds the time per text. Seeds: corpus/tokenizer_template/.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/text/hf_tokenizer.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;
using json = nlohmann::json;

namespace {

// Choices from the input's bytes; zeros once they run out, so every input is a complete recipe.
struct Draw {
    const std::uint8_t* at;
    std::size_t left;

    std::uint8_t byte() {
        if (left == 0) return 0;
        --left;
        return *at++;
    }
    std::size_t below(std::size_t n) { return n == 0 ? 0 : byte() % n; }
    bool flag() { return byte() & 1; }
    template <class T>
    const T& one_of(const std::vector<T>& options) { return options[below(options.size())]; }
    // Up to `max` bytes of the input, as they are (not always UTF-8).
    std::string text(std::size_t max) {
        const std::size_t n = std::min<std::size_t>(below(max + 1), left);
        std::string s(reinterpret_cast<const char*>(at), n);
        at += n, left -= n;
        return s;
    }
    std::string rest() { return text(left); }
};

const std::vector<std::string> pieces = {"a", "b", "c", "h", "e", "l", "o", " ", "\u0120", "\u2581", "ab", "abc", "he", "ll",
                                         "hello", "\u0120h", "\u2581h", "<unk>", "<s>", "</s>", "<0x41>", "<0xE2>", "<0x82>",
                                         "<0xAC>", "\u00e9", "e\u0301", "\U0001F642", "<|endoftext|>", "", "##a", "a</w>"};

// A token: mostly from the pool (so merges and added tokens meet the vocabulary), sometimes any bytes.
std::string token(Draw& d) { return d.below(5) == 0 ? d.text(6) : d.one_of(pieces); }

// Any JSON value, for a field given the wrong type.
json wrong_value(Draw& d) {
    switch (d.below(7)) {
        case 0: return nullptr;
        case 1: return d.flag();
        case 2: return -1;
        case 3: return 1e300;
        case 4: return json::array({token(d)});
        case 5: return json::object({{token(d), 1}});
        default: return token(d);
    }
}

// An id: usually small and in range, sometimes past the end, negative, huge or not an integer.
json id(Draw& d, std::int64_t next) {
    switch (d.below(12)) {
        case 0: return -1 - static_cast<std::int64_t>(d.byte());
        case 1: return std::int64_t{1} << (20 + d.below(44));
        case 2: return next + 1 + d.below(300);  // a gap: a sparse vocabulary
        case 3: return d.below(next + 1);        // perhaps taken already
        case 4: return wrong_value(d);
        default: return next;
    }
}

json vocabulary(Draw& d) {
    json vocab = json::object();
    const std::size_t n = d.below(40);
    for (std::size_t i = 0; i < n; ++i) vocab[token(d)] = id(d, static_cast<std::int64_t>(i));
    return vocab;
}

json merges(Draw& d) {
    json list = json::array();
    const std::size_t n = d.below(24);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string a = token(d), b = token(d);
        switch (d.below(8)) {
            case 0: list.push_back(json::array({a, b})); break;
            case 1: list.push_back(a); break;  // one part
            case 2: list.push_back(a + " " + b + " " + token(d)); break;
            case 3: list.push_back(wrong_value(d)); break;
            default: list.push_back(a + " " + b);
        }
    }
    return list;
}

json model(Draw& d) {
    json m = {{"type", d.below(8) == 0 ? d.one_of<std::string>({"WordPiece", "Unigram", "WordLevel", "bpe", ""}) : "BPE"},
              {"vocab", vocabulary(d)},
              {"merges", merges(d)}};
    if (d.flag()) m["unk_token"] = d.below(4) == 0 ? wrong_value(d) : json(token(d));
    if (d.flag()) m["byte_fallback"] = d.below(6) == 0 ? wrong_value(d) : json(d.flag());
    if (d.flag()) m["fuse_unk"] = d.flag();
    if (d.flag()) m["ignore_merges"] = d.flag();
    if (d.below(4) == 0) m["dropout"] = d.one_of<json>({nullptr, 0.0, 0.5, "x"});
    if (d.below(6) == 0) m["continuing_subword_prefix"] = d.one_of<json>({nullptr, "##", ""});
    if (d.below(6) == 0) m["end_of_word_suffix"] = d.one_of<json>({nullptr, "</w>", ""});
    if (d.below(10) == 0) m.erase(d.one_of<std::string>({"vocab", "merges", "type"}));
    return m;
}

// A pattern: real tokenizers' regexes, ones that backtrack badly, or any bytes.
json pattern(Draw& d) {
    static const std::vector<std::string> regexes = {
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
        R"(\p{N})", R"(\s+)", R"([\P{L}-]+)", R"(\w+|\W)", R"((a+)+$)", R"((a|a)*b)", R"((?:\w+\s?)*$)", R"(((a*)*)*c)",
        R"(\p{Letter}+)", R"([^\s\p{L}\p{N}]+)", R"((?=a))", R"()", R"([)", R"(\p{Nope})", R"((?<x>a)\k<x>)"};
    if (d.below(4) == 0) return {{"String", token(d)}};
    if (d.below(8) == 0) return wrong_value(d);
    return {{"Regex", d.below(5) == 0 ? d.text(24) : d.one_of(regexes)}};
}

json normalizer(Draw& d, int depth = 0) {
    switch (d.below(9)) {
        case 0: return nullptr;
        case 1: return {{"type", "NFC"}};
        case 2: return {{"type", "Prepend"}, {"prepend", d.below(5) == 0 ? wrong_value(d) : json(token(d))}};
        case 3: return {{"type", "Replace"}, {"pattern", pattern(d)}, {"content", token(d)}};
        case 4: {
            json list = json::array();
            for (std::size_t i = 0, n = depth < 2 ? d.below(4) : 0; i < n; ++i) list.push_back(normalizer(d, depth + 1));
            return {{"type", "Sequence"}, {"normalizers", list}};
        }
        case 5: return {{"type", d.one_of<std::string>({"Lowercase", "NFKC", "NFD", "BertNormalizer", "Precompiled", "Strip"})}};
        case 6: return {{"type", d.text(8)}};
        case 7: return wrong_value(d);
        default: return nullptr;
    }
}

json pre_tokenizer(Draw& d, int depth = 0) {
    switch (d.below(8)) {
        case 0: return nullptr;
        case 1:
            return {{"type", "Split"},
                    {"pattern", pattern(d)},
                    {"behavior", d.one_of<json>({"Removed", "Isolated", "Contiguous", "MergedWithPrevious", "MergedWithNext", "Other", 3})},
                    {"invert", d.below(6) == 0 ? wrong_value(d) : json(d.flag())}};
        case 2: return {{"type", "ByteLevel"}, {"add_prefix_space", d.flag()}, {"use_regex", d.flag()}, {"trim_offsets", true}};
        case 3:
            return {{"type", "Metaspace"},
                    {"replacement", d.below(5) == 0 ? json(token(d)) : json("\u2581")},
                    {"prepend_scheme", d.one_of<json>({"always", "first", "never", "sometimes", nullptr})},
                    {"split", d.flag()}};
        case 4: {
            json list = json::array();
            for (std::size_t i = 0, n = depth < 2 ? d.below(4) : 0; i < n; ++i) list.push_back(pre_tokenizer(d, depth + 1));
            return {{"type", "Sequence"}, {"pretokenizers", list}};
        }
        case 5: return {{"type", d.one_of<std::string>({"Whitespace", "Digits", "Punctuation", "BertPreTokenizer", "WhitespaceSplit"})}};
        case 6: return wrong_value(d);
        default: return {{"type", d.text(8)}};
    }
}

json added_tokens(Draw& d, std::int64_t next) {
    json list = json::array();
    const std::size_t n = d.below(6);
    for (std::size_t i = 0; i < n; ++i) {
        json t = {{"id", id(d, next + static_cast<std::int64_t>(i))},
                  {"content", d.below(8) == 0 ? wrong_value(d) : json(token(d))},
                  {"special", d.flag()},
                  {"lstrip", d.flag()},
                  {"rstrip", d.flag()},
                  {"single_word", d.flag()},
                  {"normalized", d.flag()}};
        if (d.below(10) == 0) t.erase(d.one_of<std::string>({"id", "content", "special"}));
        list.push_back(t);
    }
    return list;
}

json post_processor(Draw& d) {
    switch (d.below(6)) {
        case 0: {
            const std::string special = token(d);
            json ids = json::array();
            for (std::size_t i = 0, n = d.below(3); i < n; ++i) ids.push_back(id(d, 1));
            json single = json::array({{{"SpecialToken", {{"id", special}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
            if (d.flag()) single.push_back({{"SpecialToken", {{"id", token(d)}, {"type_id", 0}}}});
            if (d.below(6) == 0) single.push_back(wrong_value(d));
            return {{"type", "TemplateProcessing"},
                    {"single", single},
                    {"pair", json::array()},
                    {"special_tokens", {{special, {{"id", special}, {"ids", ids}, {"tokens", json::array({special})}}}}}};
        }
        case 1: return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
        case 2: return {{"type", "Sequence"}, {"processors", json::array({post_processor(d)})}};
        case 3: return {{"type", d.one_of<std::string>({"RobertaProcessing", "BertProcessing", ""})}};
        case 4: return wrong_value(d);
        default: return nullptr;
    }
}

json decoder(Draw& d, int depth = 0) {
    switch (d.below(11)) {
        case 0: return nullptr;
        case 1: return {{"type", "ByteLevel"}};
        case 2: return {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", d.one_of<json>({"always", "first", "never"})}, {"split", d.flag()}};
        case 3: return {{"type", "ByteFallback"}};
        case 4: return {{"type", "Fuse"}};
        case 5:
            return {{"type", "Strip"}, {"content", token(d)}, {"start", d.below(4) == 0 ? wrong_value(d) : json(d.below(3))}, {"stop", d.below(3)}};
        case 6: return {{"type", "Replace"}, {"pattern", pattern(d)}, {"content", token(d)}};
        case 7: {
            json list = json::array();
            for (std::size_t i = 0, n = depth < 2 ? d.below(4) : 0; i < n; ++i) list.push_back(decoder(d, depth + 1));
            return {{"type", "Sequence"}, {"decoders", list}};
        }
        case 8: return {{"type", d.one_of<std::string>({"WordPiece", "CTC", "BPEDecoder", "x"})}};
        case 9: return wrong_value(d);
        default: return nullptr;
    }
}

json tokenizer_json(Draw& d) {
    json m = model(d);
    const std::int64_t next = m.contains("vocab") && m["vocab"].is_object() ? static_cast<std::int64_t>(m["vocab"].size()) : 0;
    json root = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added_tokens(d, next)},
                 {"normalizer", normalizer(d)}, {"pre_tokenizer", pre_tokenizer(d)}, {"post_processor", post_processor(d)},
                 {"decoder", decoder(d)}, {"model", m}};
    if (d.below(12) == 0) root[d.one_of<std::string>({"added_tokens", "model", "normalizer", "version"})] = wrong_value(d);
    return root;
}

json tokenizer_config(Draw& d) {
    auto special = [&]() -> json {
        switch (d.below(5)) {
            case 0: return wrong_value(d);
            case 1: return {{"content", token(d)}, {"lstrip", false}, {"__type", "AddedToken"}};
            default: return token(d);
        }
    };
    json config = json::object();
    if (d.flag()) config["bos_token"] = special();
    if (d.flag()) config["eos_token"] = special();
    if (d.flag()) config["tokenizer_class"] = d.one_of<json>({"LlamaTokenizerFast", "GemmaTokenizer", "Qwen2Tokenizer", "PreTrainedTokenizerFast", 7});
    if (d.flag()) config["add_bos_token"] = d.below(5) == 0 ? wrong_value(d) : json(d.flag());
    if (d.flag()) config["add_eos_token"] = d.below(5) == 0 ? wrong_value(d) : json(d.flag());
    if (d.flag()) config["clean_up_tokenization_spaces"] = d.below(5) == 0 ? wrong_value(d) : json(d.flag());
    return config;
}

void check(const text::HfTokenizer& t, const std::string& text) {
    for (const bool special : {false, true}) {
        std::vector<std::int64_t> ids;
        try {
            ids = special ? t.encode_with_special_tokens(text) : t.encode(text);
        } catch (const Error&) {  // a refusal (a pattern past PCRE2's match limit) is allowed; anything else is not
            continue;
        }
        for (const std::int64_t i : ids)
            if (i < 0 || i >= t.vocab_size()) __builtin_trap();
        try {  // ids the tokenizer made itself always decode
            (void)t.decode(ids);
            (void)t.decode_as_hf(ids, true);
        } catch (const Error& e) {
            std::fprintf(stderr, "decoding its own ids failed: %s\n", e.what());
            __builtin_trap();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static fuzz::MemoryFile tokenizer_file, config_file;
    Draw d{data, size};
    const std::string tokenizer = tokenizer_json(d).dump(-1, ' ', false, json::error_handler_t::replace);
    const bool with_config = d.flag();
    const std::string config = tokenizer_config(d).dump(-1, ' ', false, json::error_handler_t::replace);
    const std::string text = d.rest();
    if (std::getenv("REMAT_FUZZ_SHOW")) std::fprintf(stderr, "%s\n%s\n%s\n", tokenizer.c_str(), config.c_str(), text.c_str());
    const std::string tokenizer_path = tokenizer_file.hold(reinterpret_cast<const std::uint8_t*>(tokenizer.data()), tokenizer.size());
    std::optional<std::filesystem::path> config_path;
    if (with_config) config_path = config_file.hold(reinterpret_cast<const std::uint8_t*>(config.data()), config.size());
    try {
        check(text::HfTokenizer::from_files(tokenizer_path, config_path), text);
    } catch (const Error&) {
    }
    return 0;
}
