#pragma once
// Hot loops are compiled for several instruction sets and picked at load time, as PyTorch does:
// the library itself targets baseline x86-64, which would leave AVX2/AVX-512 unused.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define REMAT_VECTOR_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define REMAT_VECTOR_CLONES
#endif
