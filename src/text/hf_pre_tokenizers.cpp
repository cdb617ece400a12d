#include "src/text/hf_pre_tokenizers.hpp"

#include "remat/core/in_quotes.hpp"
#include "src/text/byte_level.hpp"
#include "src/text/hf_json.hpp"
#include "src/text/pretokenize.hpp"
#include "src/text/tokenizer_files.hpp"

namespace remat::text::detail {

using json = nlohmann::json;

namespace {

SplitBehavior read_behavior(const json& split, const std::string& where) {
    const std::string b = string_field(split, "behavior", where);
    if (b == "Removed") return SplitBehavior::removed;
    if (b == "Isolated") return SplitBehavior::isolated;
    if (b == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
    if (b == "MergedWithNext") return SplitBehavior::merged_with_next;
    if (b == "Contiguous") return SplitBehavior::contiguous;
    fail(where, "behavior " + in_quotes(b) + " is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

void read_into(std::vector<PreTokenizer>& steps, const json& p, const std::string& where) {
    const std::string type = type_of(p, where);
    if (type == "Sequence") {
        const json& list = list_field(p, "pretokenizers", where);
        for (std::size_t i = 0; i < list.size(); ++i) read_into(steps, list[i], where + ".pretokenizers[" + std::to_string(i) + "]");
    } else if (type == "Split") {
        steps.push_back(Split{pattern_field(p, where), read_behavior(p, where), bool_field(p, "invert", false, where)});
    } else if (type == "ByteLevel") {
        steps.push_back(ByteLevel{bool_field(p, "add_prefix_space", true, where), bool_field(p, "use_regex", true, where)});
    } else if (type == "Metaspace") {
        steps.push_back(Metaspace{character_field(p, "replacement", "\u2581", where), read_prepend_scheme(p, where),
                                  bool_field(p, "split", true, where)});
    } else {
        fail(where, "pre-tokenizer " + in_quotes(type) + " is not supported (remat reads Split, ByteLevel, Metaspace and Sequence)");
    }
}

// Each (begin, end, is_match) of a piece's text, covering all of it (tokenizers' Pattern::find_matches).
struct Span {
    std::size_t begin, end;
    bool delimiter;
};

std::vector<Span> spans_of(std::size_t size, const std::vector<std::pair<std::size_t, std::size_t>>& matches, bool invert) {
    std::vector<Span> spans;
    std::size_t from = 0;
    for (const auto& [begin, end] : matches) {
        if (from != begin) spans.push_back({from, begin, invert});
        spans.push_back({begin, end, !invert});
        from = end;
    }
    if (from != size) spans.push_back({from, size, invert});
    return spans;
}

}  // namespace

PrependScheme read_prepend_scheme(const json& object, const std::string& where) {
    if (object.contains("prepend_scheme") && !object["prepend_scheme"].is_null()) {
        const std::string s = string_field(object, "prepend_scheme", where);
        const PrependScheme scheme = s == "always" ? PrependScheme::always
                                     : s == "first" ? PrependScheme::first
                                     : s == "never" ? PrependScheme::never
                                                    : (fail(where, "prepend_scheme " + in_quotes(s) + " is not always, first or never"), PrependScheme::never);
        if (bool_field(object, "add_prefix_space", true, where) == false && scheme != PrependScheme::never)
            fail(where, "add_prefix_space false contradicts prepend_scheme " + in_quotes(s));
        return scheme;
    }
    return bool_field(object, "add_prefix_space", true, where) ? PrependScheme::always : PrependScheme::never;
}

std::vector<PreTokenizer> read_pre_tokenizers(const json& pre_tokenizer, const std::string& where) {
    std::vector<PreTokenizer> steps;
    if (!pre_tokenizer.is_null()) read_into(steps, pre_tokenizer, where);
    return steps;
}

void split_piece(const Piece& piece, const std::vector<std::pair<std::size_t, std::size_t>>& matches, SplitBehavior behavior, bool invert,
                 std::vector<Piece>& out) {
    const std::vector<Span> spans = spans_of(piece.text.size(), matches, invert);
    std::vector<std::pair<std::size_t, std::size_t>> kept;
    bool previous_delimiter = false;
    switch (behavior) {
        case SplitBehavior::isolated:
            for (const Span& s : spans) kept.emplace_back(s.begin, s.end);
            break;
        case SplitBehavior::removed:
            for (const Span& s : spans)
                if (!s.delimiter) kept.emplace_back(s.begin, s.end);
            break;
        case SplitBehavior::contiguous:  // neighbours of the same kind join
            for (const Span& s : spans) {
                if (s.delimiter == previous_delimiter && !kept.empty())
                    kept.back().second = s.end;
                else
                    kept.emplace_back(s.begin, s.end);
                previous_delimiter = s.delimiter;
            }
            break;
        case SplitBehavior::merged_with_previous:
            for (const Span& s : spans) {
                if (s.delimiter && !previous_delimiter && !kept.empty())
                    kept.back().second = s.end;
                else
                    kept.emplace_back(s.begin, s.end);
                previous_delimiter = s.delimiter;
            }
            break;
        case SplitBehavior::merged_with_next:  // the same from the right
            for (auto s = spans.rbegin(); s != spans.rend(); ++s) {
                if (s->delimiter && !previous_delimiter && !kept.empty())
                    kept.back().first = s->begin;
                else
                    kept.emplace_back(s->begin, s->end);
                previous_delimiter = s->delimiter;
            }
            std::reverse(kept.begin(), kept.end());
            break;
    }
    for (const auto& [begin, end] : kept)
        if (end > begin) out.push_back({piece.text.substr(begin, end - begin), piece.at_start && begin == 0, -1});
}

namespace {

void keep_whole(Piece& p, std::vector<Piece>& out) {
    if (!p.text.empty()) out.push_back(std::move(p));
}

void run(const Split& s, std::vector<Piece>& pieces) {
    each_piece(pieces, [&](Piece& p, std::vector<Piece>& out) { split_piece(p, s.pattern.find_all(p.text), s.behavior, s.invert, out); });
}

void run(const ByteLevel& b, std::vector<Piece>& pieces) {
    each_piece(pieces, [&](Piece& p, std::vector<Piece>& out) {
        if (b.add_prefix_space && !p.text.starts_with(' ')) p.text.insert(p.text.begin(), ' ');
        if (b.use_regex)
            split_piece(p, gpt2_pattern().find_all(p.text), SplitBehavior::isolated, false, out);
        else
            keep_whole(p, out);
    });
    for (Piece& p : pieces) {  // bytes -> GPT-2's byte symbols, which the vocabulary is written in
        if (p.added_id >= 0) continue;
        std::string symbols;
        symbols.reserve(p.text.size() * 2);
        for (const char c : p.text) append_utf8(symbols, byte_symbol(static_cast<std::uint8_t>(c)));
        p.text = std::move(symbols);
    }
}

void run(const Metaspace& m, std::vector<Piece>& pieces) {
    each_piece(pieces, [&](Piece& p, std::vector<Piece>& out) {
        std::string text;
        text.reserve(p.text.size() + 8);
        for (const char c : p.text) {
            if (c == ' ')
                text.append(m.replacement);
            else
                text.push_back(c);
        }
        const bool prepend = !text.starts_with(m.replacement) &&
                             (m.prepend == PrependScheme::always || (m.prepend == PrependScheme::first && p.at_start));
        if (prepend) text.insert(0, m.replacement);
        p.text = std::move(text);
        if (!m.split) return keep_whole(p, out);
        std::vector<std::pair<std::size_t, std::size_t>> at;
        for (std::size_t i = p.text.find(m.replacement); i != std::string::npos; i = p.text.find(m.replacement, i + m.replacement.size()))
            at.emplace_back(i, i + m.replacement.size());
        split_piece(p, at, SplitBehavior::merged_with_next, false, out);
    });
}

}  // namespace

void pre_tokenize(const std::vector<PreTokenizer>& steps, std::vector<Piece>& pieces) {
    for (const PreTokenizer& step : steps) std::visit([&](const auto& s) { run(s, pieces); }, step);
}

}  // namespace remat::text::detail
