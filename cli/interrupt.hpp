#pragma once
// SIGINT and SIGTERM during training: the first asks the run to stop after the current step (and
// save, so that it can resume); a second SIGINT ends the process at once, as usual.
namespace remat::cli {

// Installs the handlers for the rest of the process.
void catch_interrupts();
// The signal received (SIGINT or SIGTERM), or 0.
int interrupt_signal();

}  // namespace remat::cli
