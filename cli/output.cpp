#include "cli/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/errors.hpp"
#include "remat/core/files.hpp"

namespace remat::cli {

namespace fs = std::filesystem;

namespace {

void check_writable(const fs::path& out) {
    const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        const std::string why = why_missing(dir);
        throw Failure(out.string() + ": cannot write: folder " + dir.string() +
                      (why == "no such file or folder" ? " does not exist" : why == "exists" ? " is not a folder" : ": " + why));
    }
    const std::string probe = out.string() + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int error = errno;
        throw Failure(out.string() + ": cannot write in folder " + dir.string() + ": " + std::strerror(error));
    }
    ::close(fd);
    ::unlink(probe.c_str());
}

}  // namespace

void check_output_file(const std::string& flag, const fs::path& out, const Reading& reading) {
    if (out.empty()) throw Failure(flag + ": the path is empty");
    struct stat target {};
    if (::stat(out.c_str(), &target) == 0) {  // follows a symlink: what the path names
        if (S_ISDIR(target.st_mode)) throw Failure(out.string() + ": cannot write: it is a folder");
        if (!S_ISREG(target.st_mode))
            throw Failure(out.string() + ": is " + special_file_kind(target.st_mode) + "; " + flag +
                          " takes a regular file or a new path");
        for (const fs::path& in : reading) {
            struct stat source {};
            if (::stat(in.c_str(), &source) == 0 && source.st_dev == target.st_dev && source.st_ino == target.st_ino)
                throw Failure(out.string() + ": " + flag + " would overwrite " +
                              (in == out ? std::string("a file") : in.string() + ", a file") + " this command reads; write elsewhere");
        }
    } else if (errno == ELOOP) {  // neither absent nor a file: renaming over it would destroy the links
        throw Failure(out.string() + ": cannot write: " + std::strerror(ELOOP));
    } else if (errno == ENOENT && ::lstat(out.c_str(), &target) == 0) {  // the rename would replace the link itself
        throw Failure(out.string() + ": cannot write: " + why_missing(out) + "; give the path it should point to");
    }
    check_writable(out);
}

OutputFolder::~OutputFolder() {
    std::error_code ec;
    if (!created.empty()) fs::remove(created, ec);  // only an empty folder: a non-empty one stays
}

OutputFolder prepare_output_folder(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw Failure(dir.string() + ": exists and is not a folder");
    OutputFolder folder(fs::create_directories(dir, ec) ? dir : fs::path());
    if (ec) throw Failure(dir.string() + ": cannot create the folder: " + ec.message());
    check_writable(dir / "model.safetensors");
    return folder;
}

Reading model_folder_files(const fs::path& dir) {
    Reading files;
    for (const char* name : {"config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "vocab.json",
                             "merges.txt", "tokenizer.json", "vocab.txt", "tokenizer_config.json"})
        files.push_back(dir / name);
    // Shards: every other .safetensors file of the folder (an index names them).
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".safetensors" && it->path().filename() != "model.safetensors") files.push_back(it->path());
    return files;
}

}  // namespace remat::cli
