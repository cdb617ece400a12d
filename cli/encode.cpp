#include "cli/encode.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/errors.hpp"
#include "cli/output.hpp"
#include "remat/text/wordpiece.hpp"
#include "cli/flags.hpp"
#include "cli/model_folder.hpp"
#include "cli/numbers.hpp"
#include "cli/progress.hpp"
#include "cli/training.hpp"
#include "remat/data/encode.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/data/token_file.hpp"
#include "remat/core/memory_size.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

std::string file_line(const char* what, const data::EncodedFile& f) {
    return std::string(what) + ": " + f.path.string() + "  " + std::to_string(f.tokens) + " tokens  " + std::to_string(f.documents) +
           (f.documents == 1 ? " document  " : " documents  ") + std::to_string(f.bytes) + " bytes";
}

}  // namespace

int encode(const EncodeOptions& o) {
    // Neither output may replace an input (encoding a.txt into a.txt), a device or a folder.
    Reading reading(o.inputs.begin(), o.inputs.end());
    for (const fs::path& input : o.inputs) {  // a folder's files too: an OUT inside it is one of them once written
        std::error_code ec;
        if (fs::is_directory(input, ec))
            for (fs::path& document : data::list_documents({input})) reading.push_back(std::move(document));
    }
    for (const fs::path& f : model_folder_files(o.tokdir)) reading.push_back(f);
    check_output_file("--out", o.out, reading);
    if (o.valid_fraction || o.valid_docs) check_output_file("--out", fs::path(o.out).concat(".valid"), reading);
    const text::FolderTokenizer tokenizer = tokenizer_of_folder(o.tokdir);
    const std::uint64_t fingerprint = data::tokenizer_fingerprint(o.tokdir);
    for (const std::string& w : tokenizer.warnings) print_warning(w);
    // Raw bytes join documents as they are by design; a vocabulary without an end of text does so too,
    // where a user expects a separator: said.
    if (!tokenizer.tokenizer->document_separator() && !dynamic_cast<const text::ByteTokenizer*>(tokenizer.tokenizer.get()))
        print_warning(o.tokdir.string() + ": the tokenizer has no end-of-text token (tokenizer_config.json's eos_token, or "
                      "<|endoftext|>): documents are joined without a separator");
    if (o.out.extension() != data::token_file_extension)
        print_warning(o.out.string() + " does not end in " + data::token_file_extension + ": a folder of token files is read by its *" +
                      data::token_file_extension + " files only");

    data::EncodeOptions options;
    options.valid_fraction = o.valid_fraction;
    options.valid_docs = o.valid_docs;
    Progress progress(stdout, 0, 0);
    const auto start = std::chrono::steady_clock::now();
    auto last = start;
    if (progress.interactive())
        options.progress = [&](const data::EncodeProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            if (now - last < std::chrono::milliseconds(200)) return;
            last = now;
            const double seconds = std::chrono::duration<double>(now - start).count();
            std::string status = "encoded " + readable_memory_size(p.bytes_done);
            if (p.bytes_total > 0)
                status += " of " + readable_memory_size(p.bytes_total) + " (" + std::to_string(100 * p.bytes_done / p.bytes_total) + "%)";
            char rate[64];
            std::snprintf(rate, sizeof rate, "  %llu tokens  %.0f tokens/s", static_cast<unsigned long long>(p.tokens),
                          seconds > 0 ? static_cast<double>(p.tokens) / seconds : 0.0);
            status += rate;
            if (p.bytes_total > 0 && p.bytes_done > 0 && p.bytes_done < p.bytes_total)
                status += "  ETA " + format_duration(seconds * static_cast<double>(p.bytes_total - p.bytes_done) /
                                                     static_cast<double>(p.bytes_done));
            progress.update(0, status);
        };
    const data::EncodeReport report = data::encode(*tokenizer.tokenizer, fingerprint, o.inputs, o.out, options);
    progress.finish();

    for (const std::string& w : report.warnings) print_warning(w);
    std::printf("tokenizer: %s, fingerprint %s\n", tokenizer.tokenizer->describe().c_str(), data::format_fingerprint(fingerprint).c_str());
    std::printf("%s\n", file_line("train", report.train).c_str());
    if (report.valid) std::printf("%s\n", file_line("valid", *report.valid).c_str());
    std::printf("encoded %llu bytes into %llu tokens in %.2f s (%.0f tokens/s)\n", static_cast<unsigned long long>(report.bytes()),
                static_cast<unsigned long long>(report.tokens()), report.seconds,
                report.seconds > 0 ? static_cast<double>(report.tokens()) / report.seconds : 0.0);
    return exit_ok;
}

Command add_encode_command(CLI::App& remat) {
    struct Flags {
        std::string tokdir, out;
        std::vector<std::string> inputs;
        Text valid_fraction, valid_docs;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = remat.add_subcommand("encode", "Tokenise text files into a token file for remat train --data (atomically, streaming)");
    command->add_option("TOKDIR", flags->tokdir,
                        "A model folder (its architecture's tokenizer) or a tokenizer folder (vocab.json + merges.txt, or tokenizer.json)")
        ->required()
        ->type_name("");
    command->add_option("INPUT", flags->inputs, "Text files (one document each) or folders (each file below them, sorted by path, one document each)")
        ->required()
        ->type_name("");
    command->add_option("--out,-o", flags->out, "The token file to write, e.g. corpus.tok")->required()->type_name("OUT");
    CLI::Option* fraction = add(command, "--valid-fraction", flags->valid_fraction,
                                "Write the last documents holding about this fraction of the bytes to OUT.valid", "F");
    CLI::Option* docs = add(command, "--valid-docs", flags->valid_docs, "Write the last N documents to OUT.valid", "N");
    fraction->excludes(docs);
    command->footer(
        "Documents are joined by the tokenizer's end-of-text token (raw bytes: as they are). A folder's files are\n"
        "read recursively, sorted by path; names starting with \".\" are skipped. Memory stays bounded whatever the\n"
        "input sizes; both cores encode. On a terminal a live line shows bytes, tokens/s and ETA.\n"
        "\n"
        "Examples:\n"
        "  remat encode models/gpt2 books/ -o books.tok --valid-fraction 0.01\n"
        "  remat encode tokenizer/ a.txt b.txt c.txt -o abc.tok --valid-docs 1");
    return {command, [flags] {
                EncodeOptions o;
                o.tokdir = flags->tokdir;
                for (const std::string& i : flags->inputs) o.inputs.emplace_back(i);
                o.out = flags->out;
                if (flags->valid_fraction.given()) {
                    const float f = parse_number("--valid-fraction", flags->valid_fraction.value, 0, true);
                    if (f >= 1) throw Failure("--valid-fraction must be below 1 (some documents must stay for training), got \"" +
                                              flags->valid_fraction.value + "\"");
                    o.valid_fraction = f;
                }
                if (flags->valid_docs.given()) o.valid_docs = static_cast<std::size_t>(parse_count("--valid-docs", flags->valid_docs.value, 1));
                return encode(o);
            }};
}

}  // namespace remat::cli
