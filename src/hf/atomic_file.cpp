#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "remat/core/files.hpp"

namespace remat::hf::detail {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(const fs::path& target)
    : target_(target), path_(fs::path(target).concat(".tmp-" + std::to_string(::getpid()))) {
    // The rename at the end replaces whatever the path names: only a regular file (or nothing) may be
    // there — never a device such as /dev/null, a FIFO or a folder.
    struct stat st {};
    if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw FormatError(target_.string() + ": is " + special_file_kind(st.st_mode) + "; only a regular file can be replaced");
    // O_TRUNC: a stale file from a crashed process that had our pid is overwritten.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot create");
    created_ = true;
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (created_) ::unlink(path_.c_str());
}

void AtomicFile::write(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd_, bytes.data(), std::min<std::size_t>(bytes.size(), 1u << 30));
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = EIO;
        if (n <= 0) fail("cannot write");
        bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
}

void AtomicFile::write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::pwrite(fd_, bytes.data(), std::min<std::size_t>(bytes.size(), 1u << 30), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = EIO;
        if (n <= 0) fail("cannot write");
        bytes = bytes.subspan(static_cast<std::size_t>(n));
        offset += static_cast<std::uint64_t>(n);
    }
}

void AtomicFile::finish() {
    if (fd_ < 0) return;
    if (::fsync(fd_) != 0) fail("cannot sync");
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("cannot close");
}

void AtomicFile::commit() {
    finish();
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail("cannot rename", " to it");
    created_ = false;
    // Make the rename itself durable; the file is complete either way, so failures are ignored.
    const fs::path dir = target_.has_parent_path() ? target_.parent_path() : fs::path(".");
    if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
        ::fsync(d);
        ::close(d);
    }
}

// "<target>: cannot write "<temporary>": No space left on device". errno is read before any string is
// built: allocation may change it.
void AtomicFile::fail(const char* verb, const char* rest) const {
    const int error = errno;
    throw FormatError(target_.string() + ": " + verb + " \"" + path_.string() + "\"" + rest + ": " +
                      std::generic_category().message(error));
}

}  // namespace remat::hf::detail
