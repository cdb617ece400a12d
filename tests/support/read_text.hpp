#pragma once
// A file's bytes, for tests that compare against fixtures.
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

}  // namespace remat::test
