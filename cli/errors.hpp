#pragma once
// How the command line fails: every problem becomes exactly one line "error: …" on stderr and exit
// code 2 — usage mistakes, bad files, library exceptions alike. Warnings are "warning: …" lines.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace remat::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 2;

// A problem the command line finds itself (a bad flag value, a missing input tensor). The message
// names the thing: "in.safetensors: tensor \"input_ids\" is F32, expected I64".
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A message on one line: the library's multi-line messages (a load error lists every tensor on its
// own indented line) are joined with "; " (or a space after a trailing ':').
std::string one_line(std::string_view message);

// one_line(message), then made safe for a terminal (remat::printable: control bytes and invalid UTF-8
// as \xNN, so a file cannot forge a line) and cut to at most longest_line bytes.
inline constexpr std::size_t longest_line = 4000;
std::string terminal_line(std::string_view message);
void print_error(std::string_view message);    // "error: <message>" on stderr
void print_warning(std::string_view message);  // "warning: <message>" on stderr

// "<source>: out of memory tokenizing its N bytes (…)": a text too large for the memory this process
// may use, named (tokenize and generate hold a text whole; remat encode streams).
std::string out_of_memory_tokenizing(const std::string& source, std::size_t bytes);

}  // namespace remat::cli
