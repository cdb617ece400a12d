#pragma once
// Everything a tokenizer.json (and its tokenizer_config.json) says, ready to run (private to src/text).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "src/text/bpe.hpp"
#include "src/text/hf_bpe.hpp"
#include "src/text/hf_decoders.hpp"
#include "src/text/hf_normalizers.hpp"
#include "src/text/hf_pre_tokenizers.hpp"

namespace remat::text::detail {

struct HfTables {
    std::string source;  // "tokenizer.json + tokenizer_config.json", for describe()
    std::vector<Normalizer> normalizers;
    std::vector<PreTokenizer> pre_tokenizers;
    HfBpe model;
    std::vector<Decoder> decoders;
    bool has_decoder = false;  // without one, decode joins the tokens with spaces

    // Matched in the raw text (normalized false) and, with their contents normalized, in the normalized text.
    std::vector<AddedToken> raw_added, normalized_added;
    std::unordered_map<std::string, std::int32_t> added_id_of;  // by content as written
    std::unordered_map<std::int32_t, const std::string*> token_of;  // every id's string: added tokens, then model.vocab
                                                                    // (keys of added_id_of and model.id_of)
    std::unordered_set<std::int32_t> special;                // added tokens marked special
    std::int64_t vocab_size = 0;                             // largest id + 1

    // The post-processor with add_special_tokens: these ids go before and after one text's.
    std::vector<std::int64_t> prefix, suffix;
    std::optional<std::int32_t> bos, eos;  // tokenizer_config.json's bos_token and eos_token
    bool clean_up_tokenization_spaces = false;
    // No normalizer, GPT-2's ByteLevel pre-tokenizer without a prefix space, added tokens matched as
    // they are: GPT-2's safe cuts apply (Tokenizer::last_safe_cut).
    bool gpt2_pipeline = false;

    // A token's id: added tokens first, then the model's vocabulary.
    std::optional<std::int32_t> id_of(std::string_view token) const;
};

// Throws FormatError naming the file and the JSON path of what is malformed or not supported.
std::shared_ptr<const HfTables> read_hf_tokenizer(const std::filesystem::path& tokenizer_json,
                                                  const std::optional<std::filesystem::path>& tokenizer_config_json);

}  // namespace remat::text::detail
