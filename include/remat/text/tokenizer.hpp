#pragma once
// Text -> token ids: GPT-2's byte-level BPE, exactly as HuggingFace's (slow) GPT2Tokenizer encodes, or
// raw bytes for a model folder without a tokenizer. docs/tokenizer.md tells the details.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace remat::text {

// One virtual call per text, never per token. Implementations are immutable after construction:
// encode and decode may run on several threads at once.
class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    // Any bytes: Gpt2Tokenizer reads sequences that are not UTF-8 as U+FFFD, ByteTokenizer takes them as
    // they are.
    virtual std::vector<std::int64_t> encode(std::string_view utf8_text) const = 0;
    // The bytes the tokens stand for, concatenated. Throws ValueError for an id no token has.
    virtual std::string decode(std::span<const std::int64_t> ids) const = 0;
    // What HuggingFace's tokenizer(text) gives: encode's ids inside the special tokens the tokenizer puts
    // around one text (Llama's BOS, BERT's [CLS] … [SEP]; GPT-2 puts none, which is the default).
    virtual std::vector<std::int64_t> encode_with_special_tokens(std::string_view utf8_text) const { return encode(utf8_text); }
    // What HuggingFace's tokenizer.decode(ids, skip_special_tokens) gives. The default is decode.
    virtual std::string decode_as_hf(std::span<const std::int64_t> ids, bool /*skip_special_tokens*/) const { return decode(ids); }
    // Largest id + 1: the smallest embedding table that can take every id.
    virtual std::int64_t vocab_size() const = 0;
    // Whether a token has this id (decode takes it). The default: every id below vocab_size().
    virtual bool has_id(std::int64_t id) const { return id >= 0 && id < vocab_size(); }
    // "GPT-2 byte-level BPE (vocab.json + merges.txt, 50257 tokens)", "raw bytes (256 ids)".
    virtual std::string describe() const = 0;
    // The id that separates documents in a token file (GPT-2's "<|endoftext|>", BERT's "[SEP]");
    // none (raw bytes) joins documents as they are.
    virtual std::optional<std::int64_t> document_separator() const { return std::nullopt; }
    // The largest p <= text.size() at which the text may be cut without changing its ids, whatever
    // follows it: encode(text[0, p)) followed by encode(text[p, end) + rest) equals encode(text + rest)
    // for every rest. 0 when there is none in `text`. Streaming encoders cut long documents only there;
    // the default never cuts.
    virtual std::size_t last_safe_cut(std::string_view) const { return 0; }
};

// id = byte value. Every byte string round-trips, UTF-8 or not.
class ByteTokenizer final : public Tokenizer {
public:
    std::vector<std::int64_t> encode(std::string_view text) const override;
    std::string decode(std::span<const std::int64_t> ids) const override;
    std::int64_t vocab_size() const override { return 256; }
    std::string describe() const override;
    // Any cut is safe: text.size().
    std::size_t last_safe_cut(std::string_view text) const override { return text.size(); }
};

namespace detail {
struct Gpt2Tables;
}

// HuggingFace's GPT2Tokenizer with add_prefix_space=False (and so tokenizers' ByteLevel BPE): "<|endoftext|>"
// and other added tokens are split out whole; the rest is cut by GPT-2's regex, each piece's UTF-8 bytes
// are merged by rank. encode adds no BOS/EOS. Invalid UTF-8 in the text becomes U+FFFD, one per maximal
// ill-formed subsequence (Python's errors="replace"); decode returns the raw bytes, so
// decode(encode(t)) == t for every valid UTF-8 t. Copies share their (read-only) tables.
class Gpt2Tokenizer final : public Tokenizer {
public:
    // vocab.json (token -> id) and merges.txt ("#version" lines skipped, one "a b" merge a line, rank =
    // order). "<|endoftext|>", when in the vocabulary, is an added token as in GPT2Tokenizer. Throws
    // FormatError naming the file: unreadable, not JSON, duplicate tokens or ids, an id that is not an
    // integer in [0, 2^31), a merges line that is not two symbols, a merge whose parts or result are not
    // in the vocabulary, a byte without its one-symbol token.
    static Gpt2Tokenizer from_files(const std::filesystem::path& vocab_json, const std::filesystem::path& merges_txt);
    // HF "tokenizers" format: model.type "BPE" with model.vocab and model.merges ("a b" strings or
    // ["a", "b"] pairs), GPT-2's ByteLevel pre-tokenizer without a prefix space, no normalizer; added_tokens
    // are split out whole. Anything else is an FormatError saying what is not supported.
    static Gpt2Tokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json);

    std::vector<std::int64_t> encode(std::string_view utf8_text) const override;
    std::string decode(std::span<const std::int64_t> ids) const override;
    // decode, leaving out added tokens ("<|endoftext|>") when asked; no clean-up of spaces.
    std::string decode_as_hf(std::span<const std::int64_t> ids, bool skip_special_tokens) const override;
    std::int64_t vocab_size() const override;
    bool has_id(std::int64_t id) const override;  // false in a gap of vocab.json's ids
    std::string describe() const override;
    // "<|endoftext|>"'s id when the vocabulary has it.
    std::optional<std::int64_t> document_separator() const override;
    // The last p just before an ASCII whitespace byte (tab, line feed, vertical tab, form feed, carriage
    // return, space) that follows a character that is not whitespace, where no added token's occurrence
    // spans p. docs/tokenizer.md gives the reasoning.
    std::size_t last_safe_cut(std::string_view text) const override;

private:
    explicit Gpt2Tokenizer(std::shared_ptr<const detail::Gpt2Tables> tables) : tables_(std::move(tables)) {}
    std::shared_ptr<const detail::Gpt2Tables> tables_;
};

struct FolderTokenizer {
    std::unique_ptr<Tokenizer> tokenizer;
    std::vector<std::string> warnings;  // "x has no vocab.json + merges.txt or tokenizer.json: using raw bytes as token ids"
};

// The tokenizer of a model folder: tokenizer.json (as HF's AutoTokenizer prefers the fast tokenizer; read by
// HfTokenizer, with tokenizer_config.json), else vocab.json + merges.txt (Gpt2Tokenizer), else raw bytes
// with a warning. Throws FormatError for a malformed or unsupported
// tokenizer file, or a folder with only one of vocab.json and merges.txt; ValueError when the model's
// embedding cannot take every id (raw bytes with model_vocab_size < 256, a tokenizer whose largest id is
// >= model_vocab_size) or dir is not a folder.
FolderTokenizer tokenizer_for_folder(const std::filesystem::path& dir, std::int64_t model_vocab_size);

}  // namespace remat::text
