#include "cli/tokenize.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/errors.hpp"
#include "cli/training.hpp"
#include "remat/core/files.hpp"
#include "src/core/strict_json.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t max_input_bytes = std::size_t{1} << 30;

// A file, or standard input for none or "-"; at most 1 GiB either way.
std::string read_input(const std::optional<fs::path>& file) {
    if (file && *file != "-") return read_file(*file, max_input_bytes, "a text to tokenize (use remat encode for more)");
    std::string text;
    char buffer[1 << 16];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0;) {
        if (text.size() + n > max_input_bytes) throw Failure("standard input holds more than 1 GiB, over the limit for a text to tokenize");
        text.append(buffer, n);
    }
    if (std::ferror(stdin)) throw Failure("cannot read standard input");
    return text;
}

std::vector<std::int64_t> parse_ids(const std::string& input, const std::string& source) {
    const std::string expected = source + ": --decode expects a JSON array of token ids, like [1, 22557, 1526]";
    nlohmann::json ids;
    try {
        ids = strict_json::parse<nlohmann::json>(input, source);  // bounded nesting: [[[[… cannot overflow the stack
    } catch (const strict_json::Error& e) {
        throw Failure(expected + "; " + e.message().substr(source.size() + 2));
    }
    if (!ids.is_array()) throw Failure(expected);
    std::vector<std::int64_t> out;
    out.reserve(ids.size());
    for (const nlohmann::json& id : ids) {
        // 2^63 and above parse as unsigned: no token has such an id (nor a negative one).
        if (id.is_number_unsigned() && id.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            throw Failure(source + ": token id " + std::to_string(id.get<std::uint64_t>()) + " is outside the vocabulary");
        if (!id.is_number_integer()) throw Failure(expected + "; " + (id.is_structured() ? std::string(id.is_array() ? "an array" : "an object") : id.dump()) + " is not an integer");
        out.push_back(id.get<std::int64_t>());
    }
    return out;
}

// [1,22557,1526] and a newline (compact JSON), written directly: a JSON document of a text's ids took
// more memory than the ids themselves.
std::string ids_as_json(const std::vector<std::int64_t>& ids) {
    std::string out = "[";
    out.reserve(ids.size() * 5 + 2);
    char digits[24];
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ',';
        out.append(digits, std::to_chars(digits, digits + sizeof digits, ids[i]).ptr);
    }
    return out + "]\n";
}

void write_all(const std::string& bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0)
        throw Failure("cannot write to standard output");
}

}  // namespace

int tokenize(const TokenizeOptions& o) {
    const text::FolderTokenizer folder = tokenizer_of_folder(o.dir);
    for (const std::string& w : folder.warnings) print_warning(w);
    const text::Tokenizer& tokenizer = *folder.tokenizer;
    const std::string source = o.text && *o.text != "-" ? o.text->string() : "standard input";
    std::string input;
    try {
        input = read_input(o.text);
    } catch (const std::bad_alloc&) {
        throw Failure(source + ": out of memory reading it whole (remat encode streams a large text)");
    }
    if (o.decode) {
        write_all(tokenizer.decode_as_hf(parse_ids(input, source), o.skip_special));
        return exit_ok;
    }
    std::vector<std::int64_t> ids;
    try {
        ids = o.special ? tokenizer.encode_with_special_tokens(input) : tokenizer.encode(input);
    } catch (const std::bad_alloc&) {
        throw Failure(out_of_memory_tokenizing(source, input.size()));
    }
    write_all(ids_as_json(ids));
    return exit_ok;
}

Command add_tokenize_command(CLI::App& remat) {
    struct Flags {
        std::string dir, text, positional;
        bool no_special = false, decode = false, skip_special = false;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = remat.add_subcommand("tokenize", "Print a text's token ids as HuggingFace's tokenizer(text) does, or decode ids");
    command->add_option("DIR", flags->dir, "A model folder (its architecture's tokenizer) or a tokenizer folder (tokenizer.json, "
                                           "vocab.json + merges.txt, or vocab.txt)")
        ->required()
        ->type_name("");
    CLI::Option* text = command->add_option("--text", flags->text, "The text to read (- or absent: standard input)")->type_name("FILE");
    command->add_option("TEXT", flags->positional, "The same as --text (- : standard input)")->type_name("")->excludes(text);
    CLI::Option* no_special = command->add_flag("--no-special", flags->no_special,
                                                "Leave out the special tokens the tokenizer adds (add_special_tokens=False)");
    CLI::Option* decode = command->add_flag("--decode", flags->decode, "Read a JSON array of ids and print their text (tokenizer.decode)");
    CLI::Option* skip = command->add_flag("--skip-special", flags->skip_special, "With --decode: leave special tokens out (skip_special_tokens=True)");
    no_special->excludes(decode);
    skip->needs(decode);
    command->footer(
        "Encoding prints one JSON array and a newline; --decode prints the text exactly, without adding a newline.\n"
        "\n"
        "Examples:\n"
        "  echo -n 'Hello world' | remat tokenize models/mistral          # [1, 22557, 1526]\n"
        "  remat tokenize models/qwen2 --text book.txt --no-special\n"
        "  echo '[1, 22557, 1526]' | remat tokenize models/mistral --decode --skip-special");
    return {command, [flags] {
                TokenizeOptions o;
                o.dir = flags->dir;
                if (!flags->text.empty()) o.text = flags->text;
                if (!flags->positional.empty()) o.text = flags->positional;
                o.special = !flags->no_special;
                o.decode = flags->decode;
                o.skip_special = flags->skip_special;
                return tokenize(o);
            }};
}

}  // namespace remat::cli
