#include "remat/train/run_folders.hpp"

#include <algorithm>
#include <charconv>
#include <fcntl.h>
#include <sys/file.h>
#include <cerrno>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "remat/core/error.hpp"

namespace remat::train {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view prefix = "checkpoint-";
constexpr const char* completion_marker = "run_state.json";

// N of a folder named checkpoint-N (digits only, no sign or leading junk).
std::optional<std::int64_t> step_of(const fs::path& folder) {
    const std::string name = folder.filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
    std::int64_t n = 0;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    const auto [end, error] = std::from_chars(first, last, n);
    if (error != std::errc() || end != last || n < 0) return std::nullopt;
    return n;
}

// Complete run folders, oldest first.
std::vector<std::pair<std::int64_t, fs::path>> complete_folders(const fs::path& out) {
    std::vector<std::pair<std::int64_t, fs::path>> found;
    std::error_code ec;
    if (!fs::is_directory(out, ec)) return found;
    for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
        const auto step = step_of(e.path());
        if (step && e.is_directory(ec) && fs::is_regular_file(e.path() / completion_marker, ec))
            found.emplace_back(*step, e.path());
    }
    std::sort(found.begin(), found.end());
    return found;
}

void sync_folder(const fs::path& folder) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

void remove_folder(const fs::path& p) {
    std::error_code ec;
    fs::remove_all(p, ec);
    if (ec) throw ValueError(p.string() + ": cannot remove: " + ec.message());
}

}  // namespace

fs::path run_folder(const fs::path& out, std::int64_t step) { return out / (std::string(prefix) + std::to_string(step)); }

fs::path partial_folder(const fs::path& folder) {
    const fs::path parent = folder.parent_path().empty() ? fs::path(".") : folder.parent_path();
    return parent / ("." + folder.filename().string() + ".partial");
}

void write_folder_atomically(const fs::path& folder, const std::function<void(const fs::path& partial)>& fill) {
    const fs::path parent = folder.parent_path().empty() ? fs::path(".") : folder.parent_path();
    const fs::path partial = partial_folder(folder);
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw ValueError(parent.string() + ": cannot create the folder: " + ec.message());
    remove_folder(partial);
    fs::create_directory(partial, ec);
    if (ec) throw ValueError(partial.string() + ": cannot create the folder: " + ec.message());
    fill(partial);
    sync_folder(partial);
    if (fs::exists(folder, ec)) {  // the same step saved again: swap, then drop the old one
        const fs::path old = parent / ("." + folder.filename().string() + ".old");
        remove_folder(old);
        fs::rename(folder, old, ec);
        if (ec) throw ValueError(folder.string() + ": cannot replace: " + ec.message());
        fs::rename(partial, folder, ec);
        if (ec) throw ValueError(folder.string() + ": cannot rename " + partial.string() + " to it: " + ec.message());
        remove_folder(old);
    } else {
        fs::rename(partial, folder, ec);
        if (ec) throw ValueError(folder.string() + ": cannot rename " + partial.string() + " to it: " + ec.message());
    }
    sync_folder(parent);
}

std::optional<fs::path> latest_run_folder(const fs::path& out) {
    const auto found = complete_folders(out);
    if (found.empty()) return std::nullopt;
    return found.back().second;
}

void keep_latest(const fs::path& out, std::size_t keep) {
    if (keep < 1) throw ValueError("keep_latest: keep must be at least 1");
    const auto found = complete_folders(out);
    for (std::size_t i = 0; i + keep < found.size(); ++i) remove_folder(found[i].second);
}

SaveFolderLock::SaveFolderLock(const fs::path& out) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw ValueError(out.string() + ": cannot create the folder: " + ec.message());
    fd_ = ::open(out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw ValueError(out.string() + ": cannot open the folder: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd_);
        if (error == EWOULDBLOCK)
            throw ValueError(out.string() + ": another run is saving into this folder; give this one another folder, or wait for it");
        throw ValueError(out.string() + ": cannot lock the folder: " + std::strerror(error));
    }
}

SaveFolderLock::~SaveFolderLock() { ::close(fd_); }  // closing releases the lock

}  // namespace remat::train
