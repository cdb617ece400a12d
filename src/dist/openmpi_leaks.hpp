#pragma once
// Included by exactly one source file of each executable that may run under mpirun (the remat
// command, the dist tests): under AddressSanitizer, OpenMPI's own allocations at MPI_Init and
// MPI_Finalize (and its libevent thread's) are never freed, so LeakSanitizer is told to ignore those
// three and nothing else. OpenMPI's plugins have no frame pointers (and are dlclose'd), so the
// suppressions match only with the slow unwinder: the tests that start mpirun add
// fast_unwind_on_malloc=0 to ASAN_OPTIONS for it (everywhere else it would slow every allocation).
#include "src/core/address_sanitizer.hpp"
#ifdef REMAT_ASAN
extern "C" const char* __lsan_default_suppressions() {
    return "leak:ompi_mpi_init\nleak:ompi_mpi_finalize\nleak:event_base_loop\n";
}
#endif
