#include "cli/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/errors.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

void check_writable(const fs::path& out) {
    const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Failure(out.string() + ": cannot write: folder " + dir.string() + " does not exist");
    if (fs::is_directory(out, ec)) throw Failure(out.string() + ": cannot write: it is a folder");
    const std::string probe = out.string() + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int error = errno;
        throw Failure(out.string() + ": cannot write in folder " + dir.string() + ": " + std::strerror(error));
    }
    ::close(fd);
    ::unlink(probe.c_str());
}

void prepare_output_folder(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw Failure(dir.string() + ": exists and is not a folder");
    fs::create_directories(dir, ec);
    if (ec) throw Failure(dir.string() + ": cannot create the folder: " + ec.message());
    check_writable(dir / "model.safetensors");
}

}  // namespace remat::cli
