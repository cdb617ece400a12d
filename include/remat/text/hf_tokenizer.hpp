#pragma once
// Text -> token ids by a HuggingFace tokenizer.json: what HF's tokenizers library (the "fast" tokenizers
// of transformers) does with it, for the parts the Llama family, Qwen, Mistral, SmolLM and GPT-2 use.
// docs/tokenizer.md lists them and what is refused.
//
//   encode: added tokens cut out of the raw text -> normalizer (NFC, Prepend, Replace) -> added tokens
//   marked "normalized" cut out -> pre-tokenizer (Split, ByteLevel, Metaspace) -> BPE per piece
//   (byte_fallback, fuse_unk, ignore_merges, unk_token) -> the post-processor's special tokens
//   (TemplateProcessing) when asked.
//   decode: ids -> token strings -> decoder (ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "remat/text/tokenizer.hpp"

namespace remat::text {

namespace detail {
struct HfTables;
}

// Immutable after construction; copies share their tables; encode and decode may run on several threads.
class HfTokenizer final : public Tokenizer {
public:
    // dir/tokenizer.json, with dir/tokenizer_config.json when the folder has one.
    static HfTokenizer from_folder(const std::filesystem::path& dir);
    // tokenizer_config.json gives bos_token and eos_token, clean_up_tokenization_spaces and, for
    // LlamaTokenizer(Fast) and its kin, add_bos_token/add_eos_token, which then replace tokenizer.json's
    // post-processor as transformers does. Throws FormatError naming the file, the JSON path and the
    // component for anything malformed or not supported.
    static HfTokenizer from_files(const std::filesystem::path& tokenizer_json,
                                  const std::optional<std::filesystem::path>& tokenizer_config_json);

    // tokenizer(text, add_special_tokens=False). Bytes that are not UTF-8 become U+FFFD first.
    std::vector<std::int64_t> encode(std::string_view utf8_text) const override;
    // tokenizer(text): with the post-processor's special tokens (a BOS for Llama and Mistral).
    std::vector<std::int64_t> encode_with_special_tokens(std::string_view utf8_text) const override;
    // tokenizers' decode(ids, skip_special_tokens=False): the decoder's text, no clean-up.
    // ValueError for an id no token has.
    std::string decode(std::span<const std::int64_t> ids) const override;
    // transformers' decode: tokenizers' decode, then clean_up_tokenization when tokenizer_config.json asks.
    std::string decode_as_hf(std::span<const std::int64_t> ids, bool skip_special_tokens) const override;
    std::int64_t vocab_size() const override;
    bool has_id(std::int64_t id) const override;  // false in a gap of a sparse vocabulary
    // "tokenizer.json BPE (tokenizer.json + tokenizer_config.json, 32000 tokens, byte fallback)"
    std::string describe() const override;
    // The eos_token of tokenizer_config.json, else "<|endoftext|>" when the vocabulary has it.
    std::optional<std::int64_t> document_separator() const override;
    // GPT-2's rule (Gpt2Tokenizer::last_safe_cut) when the pipeline is GPT-2's (no normalizer, ByteLevel
    // with its regex and no prefix space, added tokens matched as written); otherwise 0: never cut.
    std::size_t last_safe_cut(std::string_view text) const override;

    std::optional<std::int64_t> bos_id() const;  // tokenizer_config.json's bos_token
    std::optional<std::int64_t> eos_id() const;  // ... and eos_token
    // A token's id (added tokens first, then the model's vocabulary); none when there is no such token.
    std::optional<std::int64_t> id_of(std::string_view token) const;

private:
    explicit HfTokenizer(std::shared_ptr<const detail::HfTables> tables) : tables_(std::move(tables)) {}
    std::vector<std::int64_t> encode_ids(std::string_view utf8_text, bool add_special_tokens) const;
    std::shared_ptr<const detail::HfTables> tables_;
};

}  // namespace remat::text
