#include "cli/interrupt.hpp"

#include <csignal>

namespace remat::cli {

namespace {
volatile std::sig_atomic_t received = 0;

extern "C" void on_signal(int signal) {
    if (received != 0 && signal == SIGINT) {  // asked twice: stop now
        std::signal(SIGINT, SIG_DFL);
        std::raise(SIGINT);
    }
    received = signal;
}
}  // namespace

void catch_interrupts() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // a write or read under way continues
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return received; }

}  // namespace remat::cli
