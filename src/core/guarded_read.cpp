#include "src/core/guarded_read.hpp"

#include <sys/stat.h>

#include <csetjmp>
#include <csignal>
#include <mutex>
#include <string>

#include "remat/core/error.hpp"

namespace remat::detail {

namespace {

struct Guard {
    const char* begin;
    std::size_t size;
    sigjmp_buf resume;
    Guard* outer;
};
thread_local Guard* innermost = nullptr;

struct sigaction previous {};

void on_sigbus(int signal, siginfo_t* info, void* context) {
    const char* at = static_cast<const char*>(info->si_addr);
    for (Guard* g = innermost; g; g = g->outer)
        if (at >= g->begin && at < g->begin + g->size) siglongjmp(g->resume, 1);
    // Not ours: what would have happened without this handler.
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) return previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        return previous.sa_handler(signal);
    }
    ::signal(SIGBUS, SIG_DFL);
    ::raise(SIGBUS);
}

void install_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_sigaction = on_sigbus;
        action.sa_flags = SA_SIGINFO | SA_NODEFER;  // NODEFER: a later fault on this thread is caught again
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &previous);
    });
}

}  // namespace

void throw_shrank(const std::filesystem::path& path, std::size_t size_when_opened) {
    struct stat st {};
    const std::string now = ::stat(path.c_str(), &st) == 0 ? std::to_string(st.st_size) + " bytes" : "gone";
    throw FormatError(path.string() + ": the file shrank while it was being read (" + std::to_string(size_when_opened) +
                      " bytes when opened, now " + now + "): was it overwritten in place?");
}

bool guarded_read(const void* begin, std::size_t size, void (*read)(void* context), void* context) {
    install_once();
    Guard guard;
    guard.begin = static_cast<const char*>(begin);
    guard.size = size;
    guard.outer = innermost;
    if (sigsetjmp(guard.resume, 1) != 0) {  // the fault: back here with the signal mask restored
        innermost = guard.outer;
        return false;
    }
    innermost = &guard;
    read(context);
    innermost = guard.outer;
    return true;
}

}  // namespace remat::detail
