#include "remat/core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "remat/core/error.hpp"

namespace remat {

namespace {
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};
[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
    throw FormatError(path.string() + ": " + problem);
}
[[noreturn]] void fail_errno(const std::filesystem::path& path, int error) {
    fail(path, "cannot read: " + std::generic_category().message(error));
}
}  // namespace

std::string read_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (f.fd < 0) fail_errno(path, errno);
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) fail_errno(path, errno);
    if (S_ISDIR(st.st_mode)) fail(path, "is a folder, expected a file");
    if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
    auto over = [&](const std::string& size) {
        fail(path, size + ", over the " + std::to_string(max_bytes) + "-byte limit for " + std::string(what));
    };
    if (static_cast<unsigned long long>(st.st_size) > max_bytes) over("is " + std::to_string(st.st_size) + " bytes");

    std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (true) {
        if (got == bytes.size()) {
            if (got > max_bytes) over("holds more than " + std::to_string(max_bytes) + " bytes");
            bytes.resize(got + std::min<std::size_t>(max_bytes + 1 - got, std::size_t{1} << 16));  // grew, or size 0 (procfs)
        }
        const ssize_t n = ::read(f.fd, bytes.data() + got, bytes.size() - got);
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

}  // namespace remat
