#pragma once
// Test helpers shared by the test files: a scratch folder removed at scope exit, and bit equality.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "remat/core/tensor.hpp"

namespace remat::test {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix = "remat-test")
        : path(std::filesystem::temp_directory_path() /
               (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++))) {
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
};

inline bool same_bits(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace remat::test
