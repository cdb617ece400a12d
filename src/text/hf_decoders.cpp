#include "src/text/hf_decoders.hpp"

#include "remat/core/in_quotes.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/hf_json.hpp"
#include "src/text/hf_normalizers.hpp"
#include "src/text/hf_pre_tokenizers.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text::detail {

using json = nlohmann::json;
using Tokens = std::vector<std::string>;

namespace {

void read_into(std::vector<Decoder>& steps, const json& d, const std::string& where) {
    const std::string type = type_of(d, where);
    if (type == "Sequence") {
        const json& list = list_field(d, "decoders", where);
        for (std::size_t i = 0; i < list.size(); ++i) read_into(steps, list[i], where + ".decoders[" + std::to_string(i) + "]");
    } else if (type == "ByteLevel") {
        steps.push_back(ByteLevelDecoder{});
    } else if (type == "Metaspace") {
        steps.push_back(MetaspaceDecoder{character_field(d, "replacement", "\u2581", where), read_prepend_scheme(d, where) != PrependScheme::never});
    } else if (type == "ByteFallback") {
        steps.push_back(ByteFallbackDecoder{});
    } else if (type == "Fuse") {
        steps.push_back(FuseDecoder{});
    } else if (type == "Strip") {
        steps.push_back(StripDecoder{character_field(d, "content", " ", where), count_field(d, "start", where), count_field(d, "stop", where)});
    } else if (type == "Replace") {
        steps.push_back(ReplaceDecoder{pattern_field(d, where), string_field(d, "content", where)});
    } else {
        fail(where, "decoder " + in_quotes(type) + " is not supported (remat reads ByteLevel, Metaspace, ByteFallback, Fuse, Strip, "
                                                   "Replace and Sequence)");
    }
}

Tokens run(const ByteLevelDecoder&, Tokens tokens) {
    std::string bytes;
    for (const std::string& t : tokens) bytes += all_byte_symbols(t) ? token_bytes(t) : t;
    return {replace_invalid_utf8(bytes)};
}

Tokens run(const MetaspaceDecoder& m, Tokens tokens) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::string out;
        const std::string& t = tokens[i];
        for (std::size_t at = 0; at < t.size();) {
            if (t.compare(at, m.replacement.size(), m.replacement) == 0) {
                if (!(i == 0 && m.strip_first)) out += ' ';
                at += m.replacement.size();
            } else {
                out += t[at++];
            }
        }
        tokens[i] = std::move(out);
    }
    return tokens;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

Tokens run(const ByteFallbackDecoder&, Tokens tokens) {
    Tokens out;
    std::string bytes;
    auto flush = [&] {
        if (bytes.empty()) return;
        if (is_utf8(bytes))
            out.push_back(bytes);
        else
            for (std::size_t i = 0; i < bytes.size(); ++i) out.push_back("\uFFFD");
        bytes.clear();
    };
    for (std::string& t : tokens) {
        const bool byte = t.size() == 6 && t.starts_with("<0x") && t.ends_with('>') && hex_digit(t[3]) >= 0 && hex_digit(t[4]) >= 0;
        if (byte) {
            bytes += static_cast<char>(hex_digit(t[3]) * 16 + hex_digit(t[4]));
            continue;
        }
        flush();
        out.push_back(std::move(t));
    }
    flush();
    return out;
}

Tokens run(const FuseDecoder&, Tokens tokens) {
    std::string all;
    for (const std::string& t : tokens) all += t;
    return {all};
}

// Counts in characters, as tokenizers does.
Tokens run(const StripDecoder& s, Tokens tokens) {
    const std::size_t n = s.content.size();
    for (std::string& t : tokens) {
        std::size_t begin = 0, end = t.size();
        for (std::size_t k = 0; k < s.start && end - begin >= n && t.compare(begin, n, s.content) == 0; ++k) begin += n;
        for (std::size_t k = 0; k < s.stop && end - begin >= n && t.compare(end - n, n, s.content) == 0; ++k) end -= n;
        t = t.substr(begin, end - begin);
    }
    return tokens;
}

Tokens run(const ReplaceDecoder& r, Tokens tokens) {
    for (std::string& t : tokens) t = replace_all(r.pattern, t, r.content);
    return tokens;
}

}  // namespace

std::vector<Decoder> read_decoders(const json& decoder, const std::string& where) {
    std::vector<Decoder> steps;
    if (!decoder.is_null()) read_into(steps, decoder, where);
    return steps;
}

std::string decode_tokens(const std::vector<Decoder>& steps, Tokens tokens) {
    for (const Decoder& step : steps) tokens = std::visit([&](const auto& s) { return run(s, std::move(tokens)); }, step);
    std::string text;
    for (const std::string& t : tokens) text += t;
    return text;
}

}  // namespace remat::text::detail
