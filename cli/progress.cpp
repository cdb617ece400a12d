#include "cli/progress.hpp"

#include <unistd.h>

namespace remat::cli {

Progress::Progress(std::FILE* out, std::size_t total, std::size_t every)
    : out_(out), total_(total), every_(every ? every : 1), interactive_(::isatty(::fileno(out)) == 1) {}

void Progress::update(std::size_t k, const std::string& status) {
    if (interactive_) {
        std::fprintf(out_, "\r\033[K%s", status.c_str());  // carriage return, erase the line
        open_line_ = true;
    } else if (k % every_ == 0 || k == total_ || k == 1) {
        std::fprintf(out_, "%s\n", status.c_str());
    }
    std::fflush(out_);
}

void Progress::finish() {
    if (open_line_) std::fprintf(out_, "\n");
    open_line_ = false;
    std::fflush(out_);
}

}  // namespace remat::cli
