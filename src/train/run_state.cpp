#include "remat/train/run_state.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "remat/core/error.hpp"
#include "remat/core/files.hpp"
#include "remat/core/in_quotes.hpp"
#include "remat/data/fingerprint.hpp"
#include "remat/hf/load.hpp"
#include "src/core/strict_json.hpp"

namespace remat::train {

namespace {

using json = nlohmann::ordered_json;
constexpr const char* format_value = "remat run state 1";
constexpr std::size_t max_bytes = 1 << 20;  // a run state is a few hundred bytes

template <class T>
T field(const json& j, const char* name, const std::filesystem::path& path) {
    const auto it = j.find(name);
    if (it == j.end()) throw FormatError(path.string() + ": \"" + name + "\" is missing");
    if constexpr (std::is_same_v<T, std::string>) {
        if (!it->is_string()) throw FormatError(path.string() + ": \"" + name + "\" must be a string");
        return it->template get<std::string>();
    } else if constexpr (std::is_unsigned_v<T>) {
        if (!it->is_number_unsigned() && !(it->is_number_integer() && it->template get<std::int64_t>() >= 0))
            throw FormatError(path.string() + ": \"" + name + "\" must be a whole number of at least 0");
        return it->template get<T>();
    } else {
        if (!it->is_number_integer() || it->template get<std::int64_t>() < 0)
            throw FormatError(path.string() + ": \"" + name + "\" must be a whole number of at least 0");
        return it->template get<T>();
    }
}

}  // namespace

void save_run_state(const RunState& s, const std::filesystem::path& path) {
    json generators = json::object();
    for (const auto& [name, g] : s.generators) generators[name] = {{"key", g.key}, {"offset", g.offset}};
    json arguments = json::object();
    for (const auto& [name, value] : s.arguments) arguments[name] = value;
    json files = json::object();
    for (const auto& [name, digest] : s.files) files[name] = data::format_fingerprint(digest);
    const json j = {{"format", format_value}, {"step", s.step},     {"epoch", s.epoch},
                    {"index", s.index},       {"tokens", s.tokens}, {"seed", s.seed},
                    {"generators", generators}, {"arguments", arguments}, {"files", files}};
    hf::write_text_atomically(path, j.dump(2) + "\n");
}

RunState load_run_state(const std::filesystem::path& path) {
    json j = strict_json::read<json>(path, max_bytes, "a run state");
    if (!j.is_object()) throw FormatError(path.string() + ": expected a JSON object");
    if (field<std::string>(j, "format", path) != format_value)
        throw FormatError(path.string() + ": \"format\" is not \"" + format_value + "\"");
    RunState s;
    s.step = field<std::int64_t>(j, "step", path);
    s.epoch = field<std::uint64_t>(j, "epoch", path);
    s.index = field<std::uint64_t>(j, "index", path);
    s.tokens = field<std::uint64_t>(j, "tokens", path);
    s.seed = field<std::uint64_t>(j, "seed", path);
    for (const char* object : {"generators", "arguments"})
        if (!j.contains(object) || !j[object].is_object())
            throw FormatError(path.string() + ": \"" + object + "\" must be an object");
    for (const auto& [name, g] : j["generators"].items()) {
        if (!g.is_object()) throw FormatError(path.string() + ": generator \"" + name + "\" must be an object");
        s.generators.emplace_back(name, Generator::State{field<std::uint64_t>(g, "key", path),
                                                         field<std::uint64_t>(g, "offset", path)});
    }
    for (const auto& [name, value] : j["arguments"].items()) {
        if (!value.is_string()) throw FormatError(path.string() + ": argument \"" + name + "\" must be a string");
        s.arguments.emplace_back(name, value.get<std::string>());
    }
    if (j.contains("files")) {  // absent in runs saved before digests
        if (!j["files"].is_object()) throw FormatError(path.string() + ": \"files\" must be an object");
        for (const auto& [name, value] : j["files"].items()) {
            const std::string text = value.is_string() ? value.get<std::string>() : "";
            std::uint64_t digest = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), digest, 16);
            if (text.size() != 16 || error != std::errc() || end != text.data() + text.size() ||
                name.find('/') != std::string::npos || name == "." || name == "..")
                throw FormatError(path.string() + ": file " + in_quotes(name) + " must be a name and 16 hex digits");
            s.files.emplace_back(name, digest);
        }
    }
    return s;
}

std::uint64_t file_digest(const std::filesystem::path& path) {
    constexpr std::uint64_t prime = 0x100000001b3ull;
    std::uint64_t lanes[4] = {data::raw_bytes_fingerprint, 1, 2, 3};
    ReadableFile file = open_regular_file(path);
    std::vector<unsigned char> buffer(std::size_t{1} << 20);
    std::uint64_t size = 0;
    for (;;) {
        std::size_t n = 0;  // the buffer filled whole but at the end: the lanes never depend on read()'s pieces
        while (n < buffer.size()) {
            const ssize_t got = ::read(file.fd(), buffer.data() + n, buffer.size() - n);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) throw FormatError(path.string() + ": cannot read: " + std::strerror(errno));
            if (got == 0) break;
            n += static_cast<std::size_t>(got);
        }
        if (n == 0) break;
        std::size_t i = 0;
        for (; i + 32 <= n; i += 32)
            for (std::size_t l = 0; l < 4; ++l) {
                std::uint64_t word;
                std::memcpy(&word, buffer.data() + i + 8 * l, 8);
                lanes[l] = (lanes[l] ^ word) * prime;
            }
        for (; i < n; ++i) lanes[0] = (lanes[0] ^ buffer[i]) * prime;  // the file's last bytes
        size += n;
        if (n < buffer.size()) break;
    }
    std::uint64_t h = lanes[0] ^ size;
    for (std::size_t l = 1; l < 4; ++l) h = (h ^ lanes[l]) * prime;
    return h;
}

}  // namespace remat::train
