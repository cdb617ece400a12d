#pragma once
// Fuzz inputs as files without touching the disk: the readers take paths (and map or unzip them), so
// each input is written into one anonymous in-memory file (memfd) opened by its /proc/self/fd path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace remat::fuzz {

class MemoryFile {
public:
    MemoryFile() : fd_(::memfd_create("remat-fuzz", MFD_CLOEXEC)) {
        if (fd_ < 0) {
            std::perror("memfd_create");
            std::abort();
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;
    ~MemoryFile() { ::close(fd_); }

    // Replaces the file's contents; returns its path.
    const std::string& hold(const std::uint8_t* data, std::size_t size) {
        if (::ftruncate(fd_, 0) != 0) fail("ftruncate");
        std::size_t done = 0;
        while (done < size) {
            const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
            if (n <= 0) fail("pwrite");
            done += static_cast<std::size_t>(n);
        }
        return path_;
    }

private:
    int fd_;
    std::string path_;
    [[noreturn]] static void fail(const char* what) {
        std::perror(what);
        std::abort();
    }
};

}  // namespace remat::fuzz
