#pragma once
// REMAT_ASAN is defined when this translation unit is built with AddressSanitizer: g++ says so with
// __SANITIZE_ADDRESS__, clang (before 16) only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define REMAT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REMAT_ASAN 1
#endif
#endif
