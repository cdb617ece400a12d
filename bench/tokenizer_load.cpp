// How long a tokenizer.json takes to load, against what plain JSON parsing of the same file costs
// (issue 35: every tokenize, encode, generate and train call pays it).
//
//     build/bench/tokenizer_load DIR [ROUNDS]        (DIR holds tokenizer.json; ROUNDS 5 by default)
//
// Each phase is timed ROUNDS times in turn and its median printed, in seconds:
//   read        the file's bytes into memory
//   scan        nlohmann-json's parser with a handler that keeps nothing: the floor of any JSON reading
//   dom         nlohmann::json::parse: the document tree nlohmann builds, and its destruction
//   load        text::HfTokenizer::from_folder: everything remat does before the first text (its tables
//               freed at the end, as a command's exit would not bother to)
// and one JSON line {"file": ..., "bytes": ..., "read_s": ..., "scan_s": ..., "dom_s": ..., "load_s": ...}.
// The loaded tokenizer encodes one sentence, so a load that skipped work would show in its ids.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "remat/core/files.hpp"
#include "remat/text/hf_tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

double median_seconds(int rounds, const std::function<void()>& phase) {
    std::vector<double> seconds;
    for (int r = 0; r < rounds; ++r) {
        const auto start = std::chrono::steady_clock::now();
        phase();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

// Accepts every event and keeps nothing.
struct Discard : nlohmann::json_sax<json> {
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: tokenizer_load DIR [ROUNDS]\n");
        return 2;
    }
    const fs::path dir = argv[1], file = dir / "tokenizer.json";
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    const std::size_t limit = std::size_t{1} << 30;

    std::string text;
    const double read_s = median_seconds(rounds, [&] { text = remat::read_file(file, limit, "tokenizer.json"); });
    const double scan_s = median_seconds(rounds, [&] {
        Discard discard;
        if (!json::sax_parse(text, &discard)) throw std::runtime_error("not JSON");
    });
    std::size_t members = 0;  // used, so the parse is not optimised away
    const double dom_s = median_seconds(rounds, [&] { members += json::parse(text).size(); });
    std::vector<std::int64_t> ids;
    const double load_s = median_seconds(rounds, [&] { ids = remat::text::HfTokenizer::from_folder(dir).encode("Hello world, how are you?"); });

    std::printf("%s: %zu bytes, medians of %d rounds\n", file.c_str(), text.size(), rounds);
    std::printf("  read %.3f s   scan %.3f s   dom %.3f s   load %.3f s (%.1fx scan)\n", read_s, scan_s, dom_s, load_s, load_s / scan_s);
    std::printf("  ids of \"Hello world, how are you?\":");
    for (const auto id : ids) std::printf(" %lld", static_cast<long long>(id));
    std::printf("\n{\"file\": \"%s\", \"bytes\": %zu, \"read_s\": %.4f, \"scan_s\": %.4f, \"dom_s\": %.4f, \"load_s\": %.4f}\n", file.c_str(),
                text.size(), read_s, scan_s, dom_s, load_s);
    return 0;
}
