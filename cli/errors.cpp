#include "cli/errors.hpp"

#include <cstdio>

#include "remat/core/in_quotes.hpp"

namespace remat::cli {

std::string one_line(std::string_view message) {
    std::string out;
    std::size_t start = 0;
    while (start <= message.size()) {
        std::size_t end = message.find('\n', start);
        if (end == std::string_view::npos) end = message.size();
        std::string_view line = message.substr(start, end - start);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
        if (!line.empty()) {
            if (!out.empty()) out += out.back() == ':' ? " " : "; ";
            out += line;
        }
        start = end + 1;
    }
    return out;
}

std::string terminal_line(std::string_view message) {
    std::string line = printable(one_line(message));
    if (line.size() > longest_line) {
        // The middle goes: a line is mostly long for a path or a name in it, and its end says why.
        const auto boundary = [&](std::size_t at) {  // not inside a UTF-8 sequence
            while (at > 0 && (static_cast<unsigned char>(line[at]) & 0xC0) == 0x80) --at;
            return at;
        };
        const std::size_t head = boundary(longest_line / 4), tail = boundary(line.size() - (longest_line - longest_line / 4 - 3));
        line = line.substr(0, head) + "..." + line.substr(tail);
    }
    return line;
}

void print_error(std::string_view message) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", terminal_line(message).c_str());
    std::fflush(stderr);
}

void print_warning(std::string_view message) {
    std::fflush(stdout);
    std::fprintf(stderr, "warning: %s\n", terminal_line(message).c_str());
    std::fflush(stderr);
}

std::string out_of_memory_tokenizing(const std::string& source, std::size_t bytes) {
    return source + ": out of memory tokenizing its " + std::to_string(bytes) +
           " bytes (a text is held whole, with its pieces and ids: tens of bytes of memory per byte; remat encode streams a large text)";
}

}  // namespace remat::cli
