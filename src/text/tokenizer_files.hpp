#pragma once
// Reading GPT-2 tokenizer files into the tables of src/text/bpe.hpp (private to src/text).
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/text/bpe.hpp"

namespace remat::text::detail {

// The pieces of vocab.json/merges.txt/tokenizer.json reading that tokenizer.json's general reader shares.
// All throw FormatError "<where>: <problem>".
struct Vocabulary {
    std::unordered_map<std::string, std::int32_t> id_of;
    std::unordered_map<std::int32_t, const std::string*> token_of;  // points into id_of's keys
};
// A JSON object of token -> id. where: "vocab.json" or "tokenizer.json: model.vocab".
Vocabulary read_vocabulary(const nlohmann::json& object, const std::string& where);

struct MergeText {
    std::string left, right;
    std::size_t position;  // merges.txt's line, model.merges' index: where(position) names it in a message
};
// The merges by their parts' ids, rank = position in the list; FormatError at the merge whose part or result
// is not in the vocabulary (vocab_name ends the message: "vocab.json", "model.vocab").
MergeTable resolve_merges(const Vocabulary& vocab, const std::vector<MergeText>& merges, const std::string& vocab_name,
                          const std::function<std::string(std::size_t position)>& where);
// model.merges: "a b" strings (tokenizers < 0.20) or ["a", "b"] pairs.
std::vector<MergeText> read_merges_json(const nlohmann::json& array, const std::string& where);

// tokenizer.json's model.vocab and model.merges, taken as the file is parsed (strict_json::Streamed):
// a tree of JSON nodes for Llama 3's 128,256 tokens and 280,147 merges costs several times the parse.
struct ModelTables {
    std::string file;
    Vocabulary vocab;  // its ids set by check()
    std::vector<MergeText> merges;
    bool vocab_streamed = false, merges_streamed = false;  // the file held them as an object / a list
    // Gives the tokens their ids, refusing an id that is not one or is given twice (after the parse, as
    // for a file read whole: a syntax error or a repeated token anywhere is named first), and refuses a
    // model.vocab or model.merges that was not streamed because it is of the wrong kind.
    void check(const nlohmann::json& model, const std::string& where);
    std::vector<std::pair<std::pair<const std::string, std::int32_t>*, nlohmann::json>> vocab_ids;  // as the file gives them
    // "x/tokenizer.json: model.merges[4]"
    std::function<std::string(std::size_t)> merge_where() const;
};
// The file's value, model.vocab and model.merges left empty (their contents are in `tables`). Refuses a
// file that is not an object with a "model" object.
nlohmann::json read_tokenizer_json_file(const std::filesystem::path& tokenizer_json, ModelTables& tables);

// tokenizer.json's added_tokens (absent or null: none), checked against the vocabulary: ids in [0, 2^31),
// no id or content twice, none contradicting model.vocab.
std::vector<AddedToken> read_added_tokens(const nlohmann::json& root, const Vocabulary& vocab, const std::string& file);

[[noreturn]] void fail(const std::string& where, const std::string& problem);
// A JSON value for a message, cut at 80 characters.
std::string excerpt(const nlohmann::json& v);

// Both throw FormatError naming the file (and the line or JSON path) and the problem.
std::shared_ptr<const Gpt2Tables> read_vocab_and_merges(const std::filesystem::path& vocab_json,
                                                        const std::filesystem::path& merges_txt);
std::shared_ptr<const Gpt2Tables> read_tokenizer_json(const std::filesystem::path& tokenizer_json);

// A tokenizer file's bytes (remat::read_file, bounded at 256 MiB); FormatError naming the file.
std::string read_file(const std::filesystem::path& file);
// A JSON file, duplicate keys at any depth rejected; FormatError naming the file.
nlohmann::json read_json(const std::filesystem::path& file);

}  // namespace remat::text::detail
