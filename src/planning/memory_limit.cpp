#include "remat/planning/memory_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace remat::planning {

namespace fs = std::filesystem;

namespace {

// The first line of a small file, or "" when it cannot be read.
std::string first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

// "VmRSS:   123 kB" style: the value in bytes of the line starting with `key` in a /proc file.
std::size_t kilobytes_field(const fs::path& file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) {
            std::istringstream fields(line.substr(key.size()));
            std::size_t kb = 0;
            fields >> kb;
            return kb * 1024;
        }
    return 0;
}

// A limit file's value in bytes; nothing for "max", unset (v1 shows ~2^63) or unreadable.
std::size_t limit_value(const std::string& text) {
    if (text.empty() || text == "max" || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return SIZE_MAX;
    if (text.size() > 19) return SIZE_MAX;
    const std::size_t v = std::stoull(text);
    return v >= (std::size_t{1} << 62) ? SIZE_MAX : v;
}

void lower(MemoryLimit& m, std::size_t value, const std::string& source) {
    if (value < m.limit) {
        m.limit = value;
        m.source = source;
    }
}

// A cgroup's folder: `path` ("/a/b", as /proc/self/cgroup names it) under the hierarchy's mount.
fs::path folder(const fs::path& mount, const std::string& path) {
    const std::size_t start = path.find_first_not_of('/');
    return start == std::string::npos ? mount : mount / path.substr(start);
}

// Walks from the process's cgroup up to the root of one hierarchy, taking the lowest `file`.
void cgroup_limits(MemoryLimit& m, const fs::path& mount, std::string path, const std::string& file) {
    while (true) {
        const fs::path limit_file = folder(mount, path) / file;
        lower(m, limit_value(first_line(limit_file)), limit_file.string());
        const std::size_t slash = path.rfind('/');
        if (slash == std::string::npos || path == "/") break;
        path = slash == 0 ? "/" : path.substr(0, slash);
    }
}

}  // namespace

MemoryLimit memory_limit(const fs::path& root) {
    MemoryLimit m;
    m.limit = SIZE_MAX;
    m.resident = kilobytes_field(root / "proc/self/status", "VmRSS:");
    if (const std::size_t available = kilobytes_field(root / "proc/meminfo", "MemAvailable:"))
        lower(m, available + m.resident, "MemAvailable + RSS");
    std::ifstream groups(root / "proc/self/cgroup");
    std::string line;
    while (std::getline(groups, line)) {
        // "4:memory:/process_api/1f75…" (v1) or "0::/user.slice/…" (v2)
        const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (controllers == "") {
            cgroup_limits(m, root / "sys/fs/cgroup", path, "memory.max");
        } else {
            std::istringstream list(controllers);
            std::string c;
            while (std::getline(list, c, ','))
                if (c == "memory") {
                    const fs::path mount = root / "sys/fs/cgroup/memory";
                    cgroup_limits(m, mount, path, "memory.limit_in_bytes");
                    // hierarchical_memory_limit covers ancestors outside this namespace's view
                    const fs::path stat = folder(mount, path) / "memory.stat";
                    std::ifstream in(stat);
                    std::string key;
                    std::size_t value = 0;
                    while (in >> key >> value)
                        if (key == "hierarchical_memory_limit") lower(m, limit_value(std::to_string(value)), stat.string());
                }
        }
    }
    // ulimit -v bounds address space, not residence: what is mapped but not resident (thread stacks,
    // reserved heap) counts as used, so limit − resident is what can still be mapped.
    struct rlimit space {};
    if (root == "/" && ::getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY) {
        const std::size_t mapped = kilobytes_field(root / "proc/self/status", "VmSize:");
        const auto cap = static_cast<std::size_t>(space.rlim_cur);
        lower(m, cap > mapped ? cap - mapped + m.resident : m.resident, "ulimit -v (RLIMIT_AS)");
    }
    if (m.limit == SIZE_MAX) m.source = "none found";
    return m;
}

std::size_t memory_margin(std::size_t limit) { return limit / 20 + (std::size_t{128} << 20); }

std::size_t activation_budget(const MemoryLimit& m, std::size_t reserve) {
    const std::size_t used = m.resident + reserve + memory_margin(m.limit);
    return m.limit > used ? m.limit - used : 0;
}

}  // namespace remat::planning
