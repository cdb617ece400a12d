#include "remat/core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "remat/core/error.hpp"

namespace remat {

namespace {
[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
    throw FormatError(path.string() + ": " + problem);
}
[[noreturn]] void fail_errno(const std::filesystem::path& path, int error) {
    fail(path, "cannot read: " + std::generic_category().message(error));
}
}  // namespace

std::string special_file_kind(unsigned mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

ReadableFile::~ReadableFile() {
    if (fd_ >= 0) ::close(fd_);
}

ReadableFile::ReadableFile(ReadableFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

ReadableFile open_regular_file(const std::filesystem::path& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below, then cleared.
    ReadableFile f;
    f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f.fd_ < 0) fail_errno(path, errno);
    struct stat st {};
    if (::fstat(f.fd_, &st) != 0) fail_errno(path, errno);
    if (S_ISDIR(st.st_mode)) fail(path, "is a folder, expected a file");
    if (!S_ISREG(st.st_mode)) fail(path, "is " + special_file_kind(st.st_mode) + ", expected a regular file");
    if (::fcntl(f.fd_, F_SETFL, ::fcntl(f.fd_, F_GETFL) & ~O_NONBLOCK) != 0) fail_errno(path, errno);
    f.size_ = static_cast<std::size_t>(st.st_size);
    return f;
}

std::string read_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
    const ReadableFile f = open_regular_file(path);
    auto over = [&](const std::string& size) {
        fail(path, size + ", over the " + std::to_string(max_bytes) + "-byte limit for " + std::string(what));
    };
    if (f.size() > max_bytes) over("is " + std::to_string(f.size()) + " bytes");

    std::string bytes(f.size(), '\0');
    std::size_t got = 0;
    while (true) {
        if (got == bytes.size()) {
            if (got > max_bytes) over("holds more than " + std::to_string(max_bytes) + " bytes");
            bytes.resize(got + std::min<std::size_t>(max_bytes + 1 - got, std::size_t{1} << 16));  // grew, or size 0 (procfs)
        }
        const ssize_t n = ::read(f.fd(), bytes.data() + got, bytes.size() - got);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail_errno(path, errno);
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    bytes.resize(got);
    return bytes;
}

std::string why_missing(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return "exists";
    switch (errno) {
        case ENOENT: {
            struct stat link {};
            if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return "a symlink to nothing (a dangling link)";
            return "no such file or folder";
        }
        case ENOTDIR: return "no such file or folder (a part of the path is not a folder)";
        case ELOOP: return "a symlink loop (too many levels of symbolic links)";
        case ENAMETOOLONG: return "a name too long for the file system (File name too long)";
        default: return std::strerror(errno);
    }
}

}  // namespace remat
