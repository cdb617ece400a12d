#pragma once
// A status line per training step: rewritten in place on a terminal, so that one line shows the
// latest step; printed as plain lines (every `every` steps and the last) when the output is a file
// or a pipe, so that logs stay readable.
#include <cstddef>
#include <cstdio>
#include <string>

namespace remat::cli {

class Progress {
public:
    Progress(std::FILE* out, std::size_t total, std::size_t every);
    // Reports step `k` of `total` (1-based).
    void update(std::size_t k, const std::string& status);
    // Ends the live line, if any.
    void finish();
    bool interactive() const { return interactive_; }

private:
    std::FILE* out_;
    std::size_t total_, every_;
    bool interactive_;
    bool open_line_ = false;
};

}  // namespace remat::cli
