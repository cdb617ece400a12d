#pragma once
// A scratch folder for a test, removed at scope exit: "<tmp>/<prefix>-<pid>-<n>".
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "tests/support/same_bits.hpp"  // same_bits used to live here; tests that include only this keep it

namespace remat::test {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix = "remat-test")
        : path(std::filesystem::temp_directory_path() /
               (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++))) {
        std::filesystem::remove_all(path);  // a leftover of a crashed run with the same pid
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;  // a destructor must not throw
        std::filesystem::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::filesystem::path operator/(const std::string& name) const { return path / name; }
    // A file in the folder holding exactly `bytes` (replacing any), and its path.
    std::filesystem::path write(const std::string& name, std::string_view bytes) const {
        const std::filesystem::path p = path / name;
        std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return p;
    }

private:
    static std::atomic<int>& counter() {
        static std::atomic<int> n{0};
        return n;
    }
};

}  // namespace remat::test
