#pragma once
// A file's bytes, for tests that compare against fixtures; writing them.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace remat::test {

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Writes `bytes` as the whole file, making its folder if needed.
inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace remat::test
