#pragma once
// Text -> token ids for BERT: HuggingFace's (slow, Python) BertTokenizer — BasicTokenizer, then
// greedy longest-match-first WordPiece — encoding without special tokens. docs/tokenizer.md tells the
// details and what decode does.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remat/text/tokenizer.hpp"

namespace remat::text {

// The keys of tokenizer_config.json that change how BertTokenizer encodes, with its defaults.
struct WordPieceOptions {
    bool do_lower_case = true;
    std::optional<bool> strip_accents{};  // none: strip accents exactly when lowercasing (original BERT)
    bool tokenize_chinese_chars = true;   // spaces around each CJK ideograph
    std::vector<std::string> never_split{};  // words kept whole (not lowercased, stripped or split)
};

namespace detail {
struct WordPieceTables;
}

// HF's BertTokenizer(vocab.txt, **tokenizer_config).encode(text, add_special_tokens=False):
//   1. "[UNK]", "[SEP]", "[PAD]", "[CLS]" and "[MASK]" (those in the vocabulary) are cut out of the
//      text whole, wherever they stand, and become their ids; the rest goes on piece by piece.
//   2. Lowercasing (do_lower_case), one code point at a time as HF does it (so a final 'Σ' becomes
//      'σ', not 'ς'); dropping NUL, U+FFFD and every character of category C* but \t \n \r; other
//      white space (Zs) to ' '; spaces around CJK ideographs; NFC; splitting at white space.
//   3. Per word: NFD and dropping the marks (Mn) when accents are stripped; splitting off each
//      punctuation character (ASCII 33–47, 58–64, 91–96, 123–126 and Unicode P*).
//   4. WordPiece per word: the longest vocabulary token that starts the word, then the longest
//      "##" token that continues it, and so on; a word of more than 100 code points, or one that
//      cannot be covered, is one [UNK].
// Bytes that are not UTF-8 become U+FFFD (and so vanish), as for GPT-2. Unicode data is ICU's
// (Debian 12: ICU 72, Unicode 15.0). Copies share their read-only tables; encode may run on several
// threads at once.
class WordPieceTokenizer final : public Tokenizer {
public:
    // vocab.txt: one token a line, id = line number (from 0); "\n", "\r\n" or "\r" end a line, blank
    // lines at the end are ignored. Throws FormatError naming the file (and line): unreadable, no
    // token, an empty line, a line that is not UTF-8, a token listed twice, no "[UNK]".
    static WordPieceTokenizer from_vocab(const std::filesystem::path& vocab_txt, WordPieceOptions options = {});
    // tokenizer_config.json's do_lower_case, strip_accents, tokenize_chinese_chars and never_split
    // (absent or null: BertTokenizer's defaults). FormatError naming the file for a malformed file or
    // a setting remat does not support (do_basic_tokenize false, other special tokens than BERT's).
    static WordPieceOptions read_options(const std::filesystem::path& tokenizer_config_json);

    std::vector<std::int64_t> encode(std::string_view utf8_text) const override;
    // HF's convert_tokens_to_string: the tokens joined by spaces, " ##" removed, so "un ##aff ##able"
    // is "unaffable". Not the inverse of encode: case, accents, spacing around punctuation and unknown
    // words are lost ("Héllo, world!" decodes as "hello , world !" with an uncased vocabulary).
    // ValueError for an id outside [0, vocab_size()).
    std::string decode(std::span<const std::int64_t> ids) const override;
    // BertTokenizer's tokenizer(text): [CLS] ids [SEP].
    std::vector<std::int64_t> encode_with_special_tokens(std::string_view utf8_text) const override;
    // decode, leaving out [UNK] [SEP] [PAD] [CLS] [MASK] when asked; no clean-up of spaces.
    std::string decode_as_hf(std::span<const std::int64_t> ids, bool skip_special_tokens) const override;
    std::int64_t vocab_size() const override;  // the number of lines
    std::string describe() const override;     // "BERT WordPiece (vocab.txt, 30522 tokens, uncased)"
    // "[SEP]", which HF puts after each sequence.
    std::optional<std::int64_t> document_separator() const override;
    // The last position before an ASCII white-space byte (' ', \t, \n, \r), other than 0: white space
    // separates words, no special token contains it, and NFC composes nothing across it, so the ids
    // on either side do not depend on the other side — whatever text follows `text`.
    std::size_t last_safe_cut(std::string_view text) const override;

    // A token's id; none when the vocabulary lacks it.
    std::optional<std::int64_t> id_of(std::string_view token) const;
    // The ids of the special tokens the vocabulary has, of [UNK] [SEP] [PAD] [CLS] [MASK]: those a
    // masked-LM collator never masks.
    std::vector<std::int64_t> special_ids() const;

private:
    explicit WordPieceTokenizer(std::shared_ptr<const detail::WordPieceTables> tables) : tables_(std::move(tables)) {}
    std::shared_ptr<const detail::WordPieceTables> tables_;
};

// The tokenizer of a BERT model folder: vocab.txt, configured by tokenizer_config.json when the folder
// has one (else BertTokenizer's defaults: uncased). There is no raw-byte fallback: FormatError
// "<dir>/vocab.txt: missing, …" without it, FormatError for a malformed file, ValueError when the
// tokenizer's largest id is >= model_vocab_size or dir is not a folder.
FolderTokenizer wordpiece_for_folder(const std::filesystem::path& dir, std::int64_t model_vocab_size);

}  // namespace remat::text
