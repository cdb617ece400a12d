#include "cli/plot_log.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/errors.hpp"
#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"
#include "src/core/strict_json.hpp"

namespace remat::cli::plotting {

namespace {

// A value for a message: scalars as written, cut short and escaped; containers by kind.
std::string shown(const nlohmann::json& v) {
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    if (v.is_string()) return in_quotes(v.get<std::string>(), 80);
    return v.dump();
}

struct LineReader {
    const std::string& file;
    std::size_t number;

    [[noreturn]] void fail(const std::string& problem) const {
        throw Failure(file + ": line " + std::to_string(number) + problem);
    }

    // The field as a number, nullopt when absent or null.
    std::optional<double> number_field(const nlohmann::json& entry, const char* key, bool whole) const {
        const auto it = entry.find(key);
        if (it == entry.end() || it->is_null()) return std::nullopt;
        if (whole ? !it->is_number_integer() : !it->is_number())
            fail(std::string(": \"") + key + "\" must be " + (whole ? "a whole number" : "a number") + ", got " +
                 shown(*it));
        return it->get<double>();
    }
};

}  // namespace

RunLog read_log(const std::filesystem::path& path) {
    const std::string file = path.string();
    (void)open_regular_file(path);  // a folder, a FIFO or a device is refused here, without blocking
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure(file + ": cannot open: " + std::strerror(errno));

    std::map<std::int64_t, Sample> train, valid;  // by step: a later line replaces an earlier one
    std::string text;
    for (std::size_t number = 1; std::getline(in, text); ++number) {
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        const LineReader line{file, number};
        nlohmann::json entry;
        try {
            entry = strict_json::parse<nlohmann::json>(text, file);
        } catch (const strict_json::Error& e) {
            // nlohmann counts the end of the input as one more column: a cut-off line (a run killed mid-write).
            if (e.byte > text.size()) {
                // The last line of a log still being written (no newline yet): left out, with a warning.
                if (in.eof()) {
                    print_warning(file + ": line " + std::to_string(number) + " is incomplete (a run still writing?); left out");
                    continue;
                }
                line.fail(" is not valid JSON (it ends early)");
            }
            if (e.byte == 0) line.fail(" is not valid JSON (" + e.message().substr(file.size() + 2) + ")");
            line.fail(" is not valid JSON (column " + std::to_string(e.byte) + ")");
        }
        if (!entry.is_object()) line.fail(" is not a JSON object");
        const auto step = line.number_field(entry, "step", true);
        const auto tokens = line.number_field(entry, "tokens", true);
        const auto loss = line.number_field(entry, "loss", false);
        const auto valid_loss = line.number_field(entry, "valid_loss", false);
        if (!step || !tokens) continue;
        const auto s = entry["step"].get<std::int64_t>();
        if (loss) train[s] = {s, *tokens, *loss};
        if (valid_loss) valid[s] = {s, *tokens, *valid_loss};
    }
    if (in.bad()) throw Failure(file + ": cannot read: " + std::strerror(errno));

    RunLog log;
    for (const auto& [s, sample] : train) log.train.push_back(sample);
    for (const auto& [s, sample] : valid) log.valid.push_back(sample);
    if (log.train.empty() && log.valid.empty())
        throw Failure(file + ": nothing to plot (no line with \"step\", \"tokens\" and \"loss\" or \"valid_loss\")");
    return log;
}

}  // namespace remat::cli::plotting
